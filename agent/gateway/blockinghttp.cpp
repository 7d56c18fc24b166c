#include "blockinghttp.h"

#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

namespace payonce::gateway {

QByteArray HttpResponse::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

HttpResponse sendBlocking(const HttpRequest &request)
{
    HttpResponse response;
    QNetworkAccessManager manager;
    // The deadline is enforced by our own timer (transferTimeout only measures inactivity).
    manager.setTransferTimeout(0);
    QNetworkRequest networkRequest(request.url);
    networkRequest.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    for (const auto &[name, value] : request.headers)
        networkRequest.setRawHeader(name, value);

    QNetworkReply *reply = nullptr;
    if (request.body.isEmpty() && request.method == "GET")
        reply = manager.get(networkRequest);
    else
        reply = manager.sendCustomRequest(networkRequest, request.method, request.body);

    QEventLoop loop;
    QTimer deadline;
    deadline.setSingleShot(true);
    bool timedOut = false;
    QObject::connect(&deadline, &QTimer::timeout, &loop, [&] {
        timedOut = true;
        reply->abort();
    });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    deadline.start(request.timeoutMs);
    if (!reply->isFinished())
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    deadline.stop();

    const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (timedOut) {
        response.outcome = HttpResponse::Outcome::TimedOut;
        response.errorText = QStringLiteral("no complete answer within %1 ms").arg(request.timeoutMs);
    } else if (status.isValid()) {
        response.outcome = HttpResponse::Outcome::Completed;
        response.status = status.toInt();
        response.body = reply->readAll();
        response.headers = reply->rawHeaderPairs();
    } else {
        response.outcome = HttpResponse::Outcome::Failed;
        response.errorText = reply->errorString();
    }
    delete reply;
    return response;
}

} // namespace payonce::gateway
