#pragma once

#include <QHash>
#include <QHostAddress>
#include <QPointer>
#include <QTcpServer>
#include <QTimer>

#include <atomic>
#include <chrono>

class QTcpSocket;

namespace payonce::http {

/// The listening socket of the agent's HTTP server, bound to QtHttpServer with
/// QAbstractHttpServer::bind(QTcpServer*). QtHttpServer 6.4 buffers whole bodies and never
/// times a connection out (docs/architecture.md, "QtHttpServer 6.4"); this class sits in front:
///
/// - It creates each socket in incomingConnection() and connects its own readyRead first,
///   so it sees every byte before QtHttpServer does. It frames requests itself (head, then
///   Content-Length bytes of body) by peek()ing, on the first and every later request of
///   a keep-alive connection.
/// - A Content-Length over maxBodyBytes is answered 413 `payload_too_large` and the
///   connection closed before the body is buffered; `Transfer-Encoding` (chunked) 411
///   `length_required`; a head over maxHeaderBytes 431; a malformed head 400. After a
///   refusal the write side is shut down and input is read and dropped until the peer
///   closes or lingerTimeout passes (so the client sees the answer rather than a reset).
/// - A request head not complete within headerTimeout of its first byte (or of the
///   connection's start: before its first request a connection is timed by this alone)
///   closes the connection (slowloris); a connection that has had a request, with none in
///   progress and no bytes for idleTimeout, is closed (idle keep-alive, stalled body).
/// - Caps on connections per peer address and in total: over a cap the connection gets
///   503 `too_many_connections` and is closed.
/// - Only a request head that passed is handed to QtHttpServer (addPendingConnection(),
///   which emits pendingConnectionAvailable, the signal QtHttpServer 6.4 listens to).
///
/// The server tells the guard when a request is being worked on (requestStarted /
/// requestFinished) so a slow handler is not mistaken for an idle connection.
/// Lives on the event-loop thread; stats() may be read from any thread.
class ConnectionGuard : public QTcpServer {
    Q_OBJECT
public:
    struct Limits {
        qint64 maxBodyBytes = 64 * 1024;
        int maxHeaderBytes = 16 * 1024;
        std::chrono::milliseconds headerTimeout{10'000};
        std::chrono::milliseconds idleTimeout{60'000};
        std::chrono::milliseconds lingerTimeout{2'000};
        int maxConnectionsPerAddress = 256;
        int maxConnections = 4096;
    };

    /// Refusals and closes, counted since start.
    struct Stats {
        quint64 accepted = 0;
        quint64 payloadTooLarge = 0; ///< 413
        quint64 lengthRequired = 0;  ///< 411
        quint64 headerTooLarge = 0;  ///< 431
        quint64 malformed = 0;       ///< 400 from the guard
        quint64 headerTimeouts = 0;  ///< slowloris closes
        quint64 idleCloses = 0;
        quint64 perAddressRefused = 0; ///< 503, per-address cap
        quint64 totalRefused = 0;      ///< 503, total cap
    };

    explicit ConnectionGuard(const Limits &limits, QObject *parent = nullptr);
    ~ConnectionGuard() override;

    const Limits &limits() const { return m_limits; }
    Stats stats() const;
    /// Open connections (handed over or not, refused ones excluded).
    int connectionCount() const;

    /// A request on socket is being worked on: not idle. Counted; pair with requestFinished.
    void requestStarted(QTcpSocket *socket);
    void requestFinished(QTcpSocket *socket);

    /// The server accepted a WebSocket handshake on socket (its path, method and token
    /// checked): what follows are frames, no longer framed or timed out here (the stream
    /// keeps its own watch). The only way a connection leaves the guard's checks.
    void upgradeAccepted(QTcpSocket *socket);

    /// Closes every connection at once (end of drain).
    void closeAllConnections();

protected:
    void incomingConnection(qintptr handle) override;

private:
    enum class State {
        Head,
        Body,
        Refused,
        Tunnel
    }; // Tunnel: an accepted WebSocket, not framed
    struct Connection {
        QPointer<QTcpSocket> socket;
        QString peer;
        State state = State::Head;
        QByteArray head;   // the part of the current request head seen so far
        QByteArray target; // the current request's target (path and query), once known
        qint64 bodyRemaining = 0;
        qint64 seenUnconsumed = 0; // before hand-over: bytes already framed, still buffered
        qint64 headStartedMs = -1; // -1: no head in progress
        qint64 lastActivityMs = 0;
        qint64 closeDeadlineMs = -1; // refused: abort at this time
        int busy = 0;
        bool handedOver = false;
        bool counted = true; // counts against the caps
    };
    enum class Verdict {
        Accept,
        Refuse
    };

    void onReadyRead(QTcpSocket *socket);
    void onGone(QTcpSocket *socket);
    Verdict checkHead(Connection &c, const QByteArray &head);
    void refuse(Connection &c, const QString &apiCode, const QString &message);
    void handOver(QTcpSocket *socket);
    void sweep();
    void forget(QTcpSocket *socket);

    Limits m_limits;
    QHash<QTcpSocket *, Connection> m_connections;
    QHash<QString, int> m_perAddress;
    int m_counted = 0;
    bool m_handingOver = false;
    QTimer m_sweepTimer;

    struct AtomicStats {
        std::atomic<quint64> accepted{0}, payloadTooLarge{0}, lengthRequired{0}, headerTooLarge{0}, malformed{0},
            headerTimeouts{0}, idleCloses{0}, perAddressRefused{0}, totalRefused{0};
    } m_stats;
    std::atomic<int> m_connectionCount{0};
};

} // namespace payonce::http
