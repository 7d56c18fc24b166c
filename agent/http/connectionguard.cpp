#include "connectionguard.h"

#include "errormapping.h"
#include "logging/categories.h"

#include <QTcpSocket>

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace payonce::http {

namespace {

qint64 nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// After a refusal only a little input is buffered at a time: it is read and dropped.
constexpr qint64 kRefusedReadBuffer = 64 * 1024;

/// Whether bytes from the peer have arrived in the kernel and wait for their read
/// notification (Qt's own buffer is not asked: a head in progress sits there, and the
/// header timeout is what judges it).
bool inputArrived(QTcpSocket *socket)
{
    int pending = 0;
    const qintptr fd = socket->socketDescriptor();
    return fd >= 0 && ::ioctl(int(fd), FIONREAD, &pending) == 0 && pending > 0;
}

} // namespace

ConnectionGuard::ConnectionGuard(const Limits &limits, QObject *parent) : QTcpServer(parent), m_limits(limits)
{
    const auto shortest = std::min({m_limits.headerTimeout, m_limits.idleTimeout, m_limits.lingerTimeout});
    m_sweepTimer.setInterval(std::clamp<qint64>(shortest.count() / 8, 20, 250));
    connect(&m_sweepTimer, &QTimer::timeout, this, &ConnectionGuard::sweep);
    m_sweepTimer.start();
}

ConnectionGuard::~ConnectionGuard()
{
    // The sockets are our children and die in ~QObject, after our members: their
    // destroyed() must not reach forget() any more.
    for (auto it = m_connections.cbegin(); it != m_connections.cend(); ++it) {
        if (it->socket)
            QObject::disconnect(it->socket, nullptr, this, nullptr);
    }
}

ConnectionGuard::Stats ConnectionGuard::stats() const
{
    Stats s;
    s.accepted = m_stats.accepted.load();
    s.payloadTooLarge = m_stats.payloadTooLarge.load();
    s.lengthRequired = m_stats.lengthRequired.load();
    s.headerTooLarge = m_stats.headerTooLarge.load();
    s.malformed = m_stats.malformed.load();
    s.headerTimeouts = m_stats.headerTimeouts.load();
    s.idleCloses = m_stats.idleCloses.load();
    s.perAddressRefused = m_stats.perAddressRefused.load();
    s.totalRefused = m_stats.totalRefused.load();
    return s;
}

int ConnectionGuard::connectionCount() const
{
    return m_connectionCount.load();
}

void ConnectionGuard::incomingConnection(qintptr handle)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(handle)) {
        qCWarning(lcHttp) << "cannot adopt an accepted socket:" << socket->errorString();
        ::close(int(handle));
        delete socket;
        return;
    }
    const qint64 now = nowMs();
    Connection c;
    c.socket = socket;
    c.peer = socket->peerAddress().toString();
    c.headStartedMs = now; // the first head must be complete within headerTimeout
    c.lastActivityMs = now;

    // Ours first: this lambda runs before QtHttpServer's readyRead handler on every chunk.
    connect(socket, &QIODevice::readyRead, this, [this, socket] { onReadyRead(socket); });
    connect(socket, &QAbstractSocket::disconnected, this, [this, socket] { onGone(socket); });
    connect(socket, &QObject::destroyed, this, [this, socket] { forget(socket); });

    const bool overTotal = m_counted >= m_limits.maxConnections;
    const bool overPeer = m_perAddress.value(c.peer) >= m_limits.maxConnectionsPerAddress;
    if (overTotal || overPeer) {
        c.counted = false;
        auto it = m_connections.insert(socket, c);
        if (overTotal) {
            m_stats.totalRefused.fetch_add(1);
            refuse(*it, QStringLiteral("too_many_connections"),
                   QStringLiteral("the server has too many open connections"));
        } else {
            m_stats.perAddressRefused.fetch_add(1);
            refuse(*it, QStringLiteral("too_many_connections"),
                   QStringLiteral("too many open connections from your address"));
        }
        return;
    }
    m_stats.accepted.fetch_add(1);
    ++m_counted;
    ++m_perAddress[c.peer];
    m_connectionCount.store(m_counted);
    m_connections.insert(socket, c);
}

void ConnectionGuard::onReadyRead(QTcpSocket *socket)
{
    if (m_handingOver)
        return; // our own re-emission for QtHttpServer; already framed
    auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    Connection &c = *it;
    if (c.state == State::Refused) {
        socket->skip(socket->bytesAvailable());
        return;
    }
    if (c.state == State::Tunnel)
        return;

    // Before the hand-over nobody reads, so the buffer still holds what we framed already;
    // after it QtHttpServer's handler readAll()s after ours, so the buffer holds only new
    // bytes each time we run.
    const qint64 available = socket->bytesAvailable();
    qint64 pos = c.handedOver ? 0 : c.seenUnconsumed;
    if (available <= pos)
        return;
    const qint64 now = nowMs();
    c.lastActivityMs = now;

    QByteArray peeked;
    bool handOverNow = false;
    while (pos < available) {
        if (c.state == State::Tunnel) {
            pos = available;
            break;
        }
        if (c.state == State::Body) {
            const qint64 take = std::min(c.bodyRemaining, available - pos);
            pos += take;
            c.bodyRemaining -= take;
            if (c.bodyRemaining == 0)
                c.state = State::Head;
            continue;
        }
        if (peeked.isNull())
            peeked = socket->peek(available);
        if (c.head.isEmpty()) {
            // Empty lines between requests are allowed (RFC 9112 2.2).
            while (pos < available && (peeked.at(pos) == '\r' || peeked.at(pos) == '\n'))
                ++pos;
            if (pos >= available)
                break;
        }
        if (c.headStartedMs < 0)
            c.headStartedMs = now;
        const qint64 old = c.head.size();
        const qint64 take = std::min<qint64>(m_limits.maxHeaderBytes + 4 - old, available - pos);
        c.head.append(peeked.constData() + pos, take);
        const qsizetype end = c.head.indexOf("\r\n\r\n", std::max<qint64>(0, old - 3));
        if (end < 0) {
            pos += take;
            if (c.head.size() > m_limits.maxHeaderBytes) {
                m_stats.headerTooLarge.fetch_add(1);
                refuse(c, QStringLiteral("header_too_large"),
                       QStringLiteral("the request head is larger than %1 bytes").arg(m_limits.maxHeaderBytes));
                return;
            }
            break;
        }
        const qint64 headLength = end + 4;
        pos += headLength - old;
        const QByteArray head = c.head.left(headLength);
        c.head.clear();
        c.headStartedMs = -1;
        if (checkHead(c, head) == Verdict::Refuse)
            return;
        if (!c.handedOver)
            handOverNow = true;
    }
    if (!c.handedOver)
        c.seenUnconsumed = pos;
    if (handOverNow)
        handOver(socket);
}

ConnectionGuard::Verdict ConnectionGuard::checkHead(Connection &c, const QByteArray &head)
{
    // Views into the head, no copies: this runs on the event loop for every request.
    QByteArrayView rest = QByteArrayView(head).first(head.size() - 4); // without the blank line
    const auto nextLine = [&rest] {
        const qsizetype end = rest.indexOf('\n');
        const QByteArrayView line = end < 0 ? rest : rest.first(end);
        rest = end < 0 ? QByteArrayView() : rest.sliced(end + 1);
        return line.trimmed();
    };
    // "METHOD SP target SP HTTP/1.x": exactly two single spaces.
    const QByteArrayView requestLine = nextLine();
    const qsizetype firstSpace = requestLine.indexOf(' ');
    const qsizetype secondSpace = firstSpace < 0 ? -1 : requestLine.indexOf(' ', firstSpace + 1);
    if (firstSpace <= 0 || secondSpace < 0 || requestLine.indexOf(' ', secondSpace + 1) >= 0
        || !requestLine.sliced(secondSpace + 1).startsWith("HTTP/1.")) {
        m_stats.malformed.fetch_add(1);
        refuse(c, QStringLiteral("invalid_request"), QStringLiteral("malformed request line"));
        return Verdict::Refuse;
    }
    c.target = requestLine.sliced(firstSpace + 1, secondSpace - firstSpace - 1).toByteArray();
    qint64 contentLength = 0;
    bool haveLength = false;
    bool expectContinue = false;
    while (!rest.isNull()) {
        const QByteArrayView line = nextLine();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0) {
            m_stats.malformed.fetch_add(1);
            refuse(c, QStringLiteral("invalid_request"), QStringLiteral("malformed header line"));
            return Verdict::Refuse;
        }
        const QByteArrayView name = line.first(colon).trimmed();
        const QByteArrayView value = line.sliced(colon + 1).trimmed();
        if (name.compare("transfer-encoding", Qt::CaseInsensitive) == 0) {
            // The body limit is enforced on Content-Length before the body is read; a
            // chunked body would have to be read to be measured, so it is refused.
            m_stats.lengthRequired.fetch_add(1);
            refuse(c, QStringLiteral("length_required"),
                   QStringLiteral("send the body with a Content-Length (chunked transfer encoding is not accepted)"));
            return Verdict::Refuse;
        }
        if (name.compare("content-length", Qt::CaseInsensitive) == 0) {
            bool ok = false;
            const qint64 length = value.toLongLong(&ok);
            if (!ok || length < 0 || (haveLength && length != contentLength)) {
                m_stats.malformed.fetch_add(1);
                refuse(c, QStringLiteral("invalid_request"), QStringLiteral("invalid Content-Length"));
                return Verdict::Refuse;
            }
            contentLength = length;
            haveLength = true;
        } else if (name.compare("expect", Qt::CaseInsensitive) == 0) {
            expectContinue = value.compare("100-continue", Qt::CaseInsensitive) == 0;
        }
    }
    if (contentLength > m_limits.maxBodyBytes) {
        m_stats.payloadTooLarge.fetch_add(1);
        refuse(c, QStringLiteral("payload_too_large"),
               QStringLiteral("the request body is larger than %1 bytes").arg(m_limits.maxBodyBytes));
        return Verdict::Refuse;
    }
    // An Upgrade header changes nothing here: the connection stays framed until the server
    // has accepted a WebSocket handshake on it (upgradeAccepted()). Any other upgrade
    // (h2c, …) is answered as HTTP/1.1 and guarded like every request.
    if (expectContinue && contentLength > 0)
        c.socket->write("HTTP/1.1 100 Continue\r\n\r\n");
    c.bodyRemaining = contentLength;
    c.state = contentLength > 0 ? State::Body : State::Head;
    return Verdict::Accept;
}

void ConnectionGuard::refuse(Connection &c, const QString &apiCode, const QString &message)
{
    QTcpSocket *socket = c.socket;
    if (!socket)
        return;
    c.state = State::Refused;
    c.head.clear();
    c.closeDeadlineMs = nowMs() + m_limits.lingerTimeout.count();
    if (c.handedOver) {
        // QtHttpServer must not parse what follows (its handler runs after ours).
        QObject::disconnect(socket, &QIODevice::readyRead, parent(), nullptr);
        if (socket->isTransactionStarted())
            socket->commitTransaction();
    }
    qCInfo(lcHttp).noquote() << "refused connection from" << c.peer << ":" << apiCode;
    socket->setReadBufferSize(kRefusedReadBuffer);
    // docs/openapi.yaml: every response to a payment or callback request names its layer, even the
    // guard's own refusals (a 10 MB notification, a chunked confirm).
    QList<QPair<QByteArray, QByteArray>> headers;
    if (carriesLayerHeader(c.target))
        headers.append({QByteArrayLiteral("X-Payonce-Layer"), QByteArrayLiteral("rejected")});
    socket->write(rawErrorResponse(apiCode, message, headers));
    socket->flush();
    // Half-close once the answer is out, then read and drop input until the peer closes
    // (or the linger deadline): closing with unread input would reset the connection and
    // the client might never see the answer.
    auto shutdownWrite = [socket] {
        if (socket->bytesToWrite() == 0 && socket->socketDescriptor() >= 0)
            ::shutdown(int(socket->socketDescriptor()), SHUT_WR);
    };
    if (socket->bytesToWrite() == 0)
        shutdownWrite();
    else
        connect(socket, &QIODevice::bytesWritten, socket, shutdownWrite);
    socket->skip(socket->bytesAvailable());
}

void ConnectionGuard::handOver(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    it->handedOver = true;
    it->seenUnconsumed = 0;
    m_handingOver = true;
    addPendingConnection(socket); // emits pendingConnectionAvailable: QtHttpServer connects now
    // QtHttpServer only reads on readyRead; what is buffered already arrived before it
    // listened, so announce it once more.
    Q_EMIT socket->readyRead();
    m_handingOver = false;
}

void ConnectionGuard::onGone(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    const bool ours = it != m_connections.end() && !it->handedOver;
    forget(socket);
    // Handed-over sockets are deleted by QtHttpServer.
    if (ours)
        socket->deleteLater();
}

void ConnectionGuard::forget(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    if (it->counted) {
        --m_counted;
        auto peer = m_perAddress.find(it->peer);
        if (peer != m_perAddress.end() && --peer.value() <= 0)
            m_perAddress.erase(peer);
        m_connectionCount.store(m_counted);
    }
    m_connections.erase(it);
}

void ConnectionGuard::upgradeAccepted(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    if (it == m_connections.end())
        return;
    it->state = State::Tunnel;
    it->head.clear();
    it->headStartedMs = -1;
    it->bodyRemaining = 0;
}

void ConnectionGuard::requestStarted(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    if (it != m_connections.end())
        ++it->busy;
}

void ConnectionGuard::requestFinished(QTcpSocket *socket)
{
    auto it = m_connections.find(socket);
    if (it != m_connections.end()) {
        it->busy = std::max(0, it->busy - 1);
        it->lastActivityMs = nowMs();
    }
}

void ConnectionGuard::sweep()
{
    const qint64 now = nowMs();
    QList<QTcpSocket *> toClose;
    QList<QTcpSocket *> dead;
    for (auto it = m_connections.begin(); it != m_connections.end(); ++it) {
        Connection &c = *it;
        if (!c.socket) {
            dead << it.key();
            continue;
        }
        switch (c.state) {
        case State::Tunnel: continue;
        case State::Refused:
            if (now >= c.closeDeadlineMs)
                toClose << it.key();
            continue;
        case State::Head:
        case State::Body: break;
        }
        if (c.busy > 0)
            continue;
        if (c.state == State::Head && c.headStartedMs >= 0 && now - c.headStartedMs > m_limits.headerTimeout.count()) {
            m_stats.headerTimeouts.fetch_add(1);
            toClose << it.key();
        } else if (c.handedOver && now - c.lastActivityMs > m_limits.idleTimeout.count()) {
            // Idle is the time after a request (keep-alive, a stalled body): before its first
            // one a connection is timed by the header timeout from its start, above.
            // A request that has arrived is not idleness, however late the event loop
            // comes to it (a stalled or busy loop): closing now would drop it — and, its
            // bytes unread, reset the connection. Its read notification frames it next.
            if (inputArrived(c.socket)) {
                c.lastActivityMs = now;
                continue;
            }
            m_stats.idleCloses.fetch_add(1);
            toClose << it.key();
        }
    }
    for (QTcpSocket *key : std::as_const(dead))
        forget(key);
    for (QTcpSocket *socket : std::as_const(toClose)) {
        forget(socket);
        socket->abort();
        socket->deleteLater();
    }
}

void ConnectionGuard::closeAllConnections()
{
    const QList<QTcpSocket *> sockets = m_connections.keys();
    for (QTcpSocket *socket : sockets) {
        auto it = m_connections.find(socket);
        if (it == m_connections.end() || !it->socket)
            continue;
        forget(socket);
        socket->abort();
        socket->deleteLater();
    }
}

} // namespace payonce::http
