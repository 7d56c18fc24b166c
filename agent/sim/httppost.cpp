#include "httppost.h"

#include <QTcpSocket>
#include <QTimer>

#include <memory>
#include <optional>

namespace payonce::sim {

namespace {

struct Exchange {
    QByteArray buffer;
    bool finished = false;
};

// The decoded body of a chunked message, or nullopt while the last chunk has not arrived.
std::optional<QByteArray> dechunk(const QByteArray &data)
{
    QByteArray body;
    qsizetype pos = 0;
    for (;;) {
        const qsizetype eol = data.indexOf("\r\n", pos);
        if (eol < 0)
            return std::nullopt;
        QByteArray sizeLine = data.mid(pos, eol - pos);
        if (const qsizetype semi = sizeLine.indexOf(';'); semi >= 0)
            sizeLine = sizeLine.left(semi);
        bool ok = false;
        const qint64 size = sizeLine.trimmed().toLongLong(&ok, 16);
        if (!ok || size < 0)
            return QByteArray(); // malformed: take what we have (nothing)
        if (size == 0)
            return body;
        if (data.size() < eol + 2 + size + 2)
            return std::nullopt;
        body.append(data.mid(eol + 2, size));
        pos = eol + 2 + size + 2;
    }
}

// A complete answer in buffer (peerClosed: nothing more will come), or nullopt.
std::optional<PostResult> parse(const QByteArray &buffer, bool peerClosed)
{
    const qsizetype headerEnd = buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) {
        if (!peerClosed)
            return std::nullopt;
        return PostResult{
            PostResult::Outcome::Failed, 0, {}, QStringLiteral("connection closed before a complete answer")};
    }
    const QList<QByteArray> lines = buffer.left(headerEnd).split('\n');
    const QList<QByteArray> statusParts = lines.value(0).trimmed().split(' ');
    bool ok = false;
    const int status = statusParts.value(1).toInt(&ok);
    if (!statusParts.value(0).startsWith("HTTP/") || !ok)
        return PostResult{PostResult::Outcome::Failed, 0, {}, QStringLiteral("malformed status line")};
    std::optional<qint64> contentLength;
    bool chunked = false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon < 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length")
            contentLength = value.toLongLong();
        else if (name == "transfer-encoding" && value.toLower().contains("chunked"))
            chunked = true;
    }
    const QByteArray rest = buffer.mid(headerEnd + 4);
    if (status == 204 || status == 304 || (status >= 100 && status < 200))
        return PostResult{PostResult::Outcome::Completed, status, {}, {}};
    if (chunked) {
        if (auto body = dechunk(rest))
            return PostResult{PostResult::Outcome::Completed, status, *body, {}};
        if (peerClosed)
            return PostResult{
                PostResult::Outcome::Failed, status, {}, QStringLiteral("connection closed inside a chunked body")};
        return std::nullopt;
    }
    if (contentLength) {
        if (rest.size() >= *contentLength)
            return PostResult{PostResult::Outcome::Completed, status, rest.left(*contentLength), {}};
        if (peerClosed)
            return PostResult{PostResult::Outcome::Failed,
                              status,
                              {},
                              QStringLiteral("connection closed before Content-Length bytes")};
        return std::nullopt;
    }
    if (peerClosed)
        return PostResult{PostResult::Outcome::Completed, status, rest, {}};
    return std::nullopt;
}

} // namespace

void postHttp(QObject *context, const OutgoingPost &post, int timeoutMs, std::function<void(const PostResult &)> done)
{
    auto *socket = new QTcpSocket(context);
    auto exchange = std::make_shared<Exchange>();
    auto finish = [socket, exchange, done](const PostResult &result) {
        if (exchange->finished)
            return;
        exchange->finished = true;
        QObject::disconnect(socket, nullptr, nullptr, nullptr);
        socket->abort();
        socket->deleteLater();
        done(result);
    };
    if (post.url.scheme() != u"http" || post.url.host().isEmpty()) {
        // Reported from the event loop like every other outcome.
        QTimer::singleShot(0, socket, [finish, url = post.url] {
            finish(PostResult{PostResult::Outcome::Failed,
                              0,
                              {},
                              QStringLiteral("unsupported URL \"%1\" (http:// only)").arg(url.toString())});
        });
        return;
    }
    auto *timer = new QTimer(socket);
    timer->setSingleShot(true);
    QObject::connect(timer, &QTimer::timeout, socket, [finish, timeoutMs] {
        finish(PostResult{
            PostResult::Outcome::TimedOut, 0, {}, QStringLiteral("no complete answer within %1 ms").arg(timeoutMs)});
    });
    timer->start(timeoutMs);

    const int port = post.url.port(80);
    QByteArray target = post.url.path(QUrl::FullyEncoded).toLatin1();
    if (target.isEmpty())
        target = "/";
    if (post.url.hasQuery())
        target += '?' + post.url.query(QUrl::FullyEncoded).toLatin1();
    QByteArray request = "POST " + target + " HTTP/1.1\r\nHost: " + post.url.host(QUrl::FullyEncoded).toLatin1();
    if (port != 80)
        request += ':' + QByteArray::number(port);
    request += "\r\n";
    for (const auto &[name, value] : post.headers)
        request += name + ": " + value + "\r\n";
    request += "Content-Length: " + QByteArray::number(post.body.size()) + "\r\nConnection: close\r\n\r\n";
    request += post.body;

    QObject::connect(socket, &QTcpSocket::connected, socket, [socket, request] { socket->write(request); });
    QObject::connect(socket, &QTcpSocket::readyRead, socket, [socket, exchange, finish] {
        exchange->buffer += socket->readAll();
        if (auto result = parse(exchange->buffer, false))
            finish(*result);
    });
    QObject::connect(socket, &QTcpSocket::disconnected, socket, [socket, exchange, finish] {
        exchange->buffer += socket->readAll();
        finish(*parse(exchange->buffer, true));
    });
    QObject::connect(socket, &QAbstractSocket::errorOccurred, socket,
                     [socket, exchange, finish](QAbstractSocket::SocketError error) {
                         if (error == QAbstractSocket::RemoteHostClosedError) {
                             exchange->buffer += socket->readAll();
                             finish(*parse(exchange->buffer, true));
                             return;
                         }
                         finish(PostResult{PostResult::Outcome::Failed, 0, {}, socket->errorString()});
                     });
    socket->connectToHost(post.url.host(), static_cast<quint16>(port));
}

} // namespace payonce::sim
