#include "agentclient.h"

#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>

namespace payonce::console {

namespace {

// Long enough for a slow database behind the agent, short enough that an unreachable
// agent shows in the banner while the operator still looks at it.
constexpr int kTransferTimeoutMs = 15000;

} // namespace

AgentClient::AgentClient(QObject *parent) : QObject(parent)
{
}

void AgentClient::setEndpoint(const QUrl &agentUrl, const QByteArray &token)
{
    m_agentUrl = agentUrl;
    m_token = token;
}

void AgentClient::get(const QString &pathAndQuery, QObject *context, Handler handler)
{
    send(QByteArrayLiteral("GET"), pathAndQuery, std::nullopt, context, std::move(handler));
}

void AgentClient::post(const QString &pathAndQuery, const QJsonObject &body, QObject *context, Handler handler)
{
    send(QByteArrayLiteral("POST"), pathAndQuery, body, context, std::move(handler));
}

void AgentClient::put(const QString &pathAndQuery, const QJsonObject &body, QObject *context, Handler handler)
{
    send(QByteArrayLiteral("PUT"), pathAndQuery, body, context, std::move(handler));
}

void AgentClient::send(const QByteArray &verb, const QString &pathAndQuery, const std::optional<QJsonObject> &body,
                       QObject *context, Handler handler)
{
    QNetworkRequest request(m_agentUrl.resolved(QUrl(pathAndQuery)));
    request.setRawHeader(QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + m_token);
    request.setTransferTimeout(kTransferTimeoutMs);
    QByteArray payload;
    if (body) {
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        payload = QJsonDocument(*body).toJson(QJsonDocument::Compact);
    }
    QNetworkReply *reply = m_network.sendCustomRequest(request, verb, payload);
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    const QPointer<QObject> guard(context);
    connect(reply, &QNetworkReply::finished, this, [this, reply, guard, handler = std::move(handler)] {
        ApiResult result;
        result.httpStatus = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray raw = reply->readAll();
        result.error = apiErrorFrom(result.httpStatus, raw, reply->errorString());
        result.json = QJsonDocument::fromJson(raw);
        using Kind = ApiError::Kind;
        const Kind kind = result.error.kind;
        if (kind == Kind::Unreachable || kind == Kind::Unauthenticated || kind == Kind::Throttled
            || kind == Kind::Forbidden)
            Q_EMIT connectionProblem(result.error);
        else if (result.httpStatus >= 200 && result.httpStatus < 300)
            Q_EMIT agentAnswered(); // only a success proves the token was taken: a 404 for a
                                    // route this agent lacks (qa.enabled off) proves nothing

        if (guard)
            handler(result);
    });
}

} // namespace payonce::console
