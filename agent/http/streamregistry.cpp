#include "streamregistry.h"

#include "logging/categories.h"

#include <QTcpSocket>
#include <QWebSocket>

namespace payonce::http {

namespace {
const QString kRevokedReason = QStringLiteral("token revoked");

void closeRevokedStream(QWebSocket *webSocket)
{
    webSocket->close(QWebSocketProtocol::CloseCodePolicyViolated, kRevokedReason);
}
} // namespace

StreamRegistry::Admission StreamRegistry::admit(QTcpSocket *socket, const Principal &principal,
                                                const QByteArray &tokenSha256)
{
    if (countFor(principal.name) >= m_maxPerToken)
        return Admission::OverCap;
    const quint64 id = ++m_lastId;
    m_streams.insert(id, Stream{principal.name, tokenSha256, socket->peerAddress(), socket->peerPort(), {}, false});
    // Until the handshake completes, the TCP socket tells the end (QtWebSockets drops these
    // connections once it has made the WebSocket; attach() then watches that instead).
    QObject::connect(socket, &QObject::destroyed, &m_connections, [this, id] { forget(id); });
    QObject::connect(socket, &QAbstractSocket::disconnected, &m_connections, [this, id] { forget(id); });
    return Admission::Admitted;
}

void StreamRegistry::attach(QWebSocket *webSocket)
{
    for (auto it = m_streams.begin(); it != m_streams.end(); ++it) {
        Stream &stream = it.value();
        if (stream.webSocket || stream.peerPort != webSocket->peerPort()
            || stream.peerAddress != webSocket->peerAddress())
            continue;
        stream.webSocket = webSocket;
        const quint64 id = it.key();
        QObject::connect(webSocket, &QWebSocket::disconnected, &m_connections, [this, id] { forget(id); });
        QObject::connect(webSocket, &QObject::destroyed, &m_connections, [this, id] { forget(id); });
        if (stream.revoked)
            closeRevokedStream(webSocket);
        return;
    }
}

int StreamRegistry::closeRevoked(const std::function<bool(const QByteArray &)> &stillValid)
{
    int closed = 0;
    // Closed after the walk: a close can disconnect at once, and forget() would then
    // remove from the hash being walked.
    QList<QPointer<QWebSocket>> toClose;
    for (auto it = m_streams.begin(); it != m_streams.end(); ++it) {
        Stream &stream = it.value();
        if (stream.revoked || stillValid(stream.tokenSha256))
            continue;
        stream.revoked = true;
        ++closed;
        qCInfo(lcHttp).noquote() << "closing the stream of" << stream.principalName << "from"
                                 << stream.peerAddress.toString() << ": its token was revoked";
        if (stream.webSocket)
            toClose.append(stream.webSocket);
        // Not attached yet: closed as soon as its handshake completes.
    }
    for (const QPointer<QWebSocket> &webSocket : toClose) {
        if (webSocket)
            closeRevokedStream(webSocket);
    }
    return closed;
}

int StreamRegistry::countFor(const QString &name) const
{
    int count = 0;
    for (const Stream &stream : m_streams) {
        if (stream.principalName == name && !stream.revoked)
            ++count;
    }
    return count;
}

void StreamRegistry::forget(quint64 id)
{
    m_streams.remove(id);
}

} // namespace payonce::http
