#pragma once

#include "authenticator.h"
#include "httptypes.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QPointer>

#include <functional>

class QTcpSocket;
class QWebSocket;

namespace payonce::http {

/// The live streams the HTTP server has admitted, by the token that opened each: what the
/// cap on streams per token counts, and what a token reload closes.
///
/// A stream is admitted on its upgrade request (admit(), before the 101: the cap is
/// answered as an HTTP refusal, never as a WebSocket that closes at once), attached to
/// its QWebSocket once the handshake completed (attach(), matched by the peer's address
/// and port), and forgotten when that WebSocket disconnects or goes — or, before it is
/// attached, when its TCP socket does (a handshake QtWebSockets refused after the
/// admission). Each stream keeps the SHA-256 of its token,
/// so a token removed — or given another secret under the same name, or a role below the
/// stream's — is told apart from one that stays.
///
/// Lives on the HTTP server's thread; every call is made there.
class StreamRegistry {
public:
    enum class Admission {
        Admitted,
        OverCap
    };

    explicit StreamRegistry(int maxPerToken) : m_maxPerToken(maxPerToken) {}

    void setMaxPerToken(int maxPerToken) { m_maxPerToken = maxPerToken; }
    int maxPerToken() const { return m_maxPerToken; }

    /// The upgrade on socket, by principal with the token of that SHA-256: admitted, or
    /// over the cap (the token's streams, handshakes in progress included, are at it).
    Admission admit(QTcpSocket *socket, const Principal &principal, const QByteArray &tokenSha256);
    /// The handshake on socket (peer address and port) completed as webSocket.
    void attach(QWebSocket *webSocket);

    /// After a token reload: closes (policy violation, "token revoked") every stream whose
    /// token `stillValid` refuses, and forgets it. Returns how many were closed.
    int closeRevoked(const std::function<bool(const QByteArray &tokenSha256)> &stillValid);

    /// Streams (and handshakes in progress) of the token named name.
    int countFor(const QString &name) const;

private:
    struct Stream {
        QString principalName;
        QByteArray tokenSha256;
        QHostAddress peerAddress;
        quint16 peerPort = 0;
        QPointer<QWebSocket> webSocket; // null until the handshake completed
        bool revoked = false;           // closed as soon as it is attached
    };
    void forget(quint64 id);

    int m_maxPerToken;
    quint64 m_lastId = 0;
    QHash<quint64, Stream> m_streams;
    // The context of every connection to a socket's signals, so that they end with the
    // registry: the stream hub owns the WebSockets and may destroy them after the HTTP
    // server is gone. Last, so it goes before the streams it would otherwise touch.
    QObject m_connections;
};

} // namespace payonce::http
