#include "streamclient.h"

#include <QNetworkRequest>

#include <algorithm>

namespace payonce::console {

namespace {

constexpr int kFirstDelayMs = 500;
constexpr int kLongestDelayMs = 30000;

} // namespace

StreamClient::StreamClient(QObject *parent) : QObject(parent), m_delayMs(kFirstDelayMs)
{
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &StreamClient::connectNow);
    connect(&m_socket, &QWebSocket::connected, this, [this] {
        m_delayMs = kFirstDelayMs;
        setState(State::Live);
    });
    connect(&m_socket, &QWebSocket::disconnected, this, [this] {
        if (m_wanted)
            scheduleReconnect();
        else
            setState(State::Closed);
    });
    // A refused connection or handshake may end without disconnected(): the error is
    // then the only word that the attempt is over.
    connect(&m_socket, QOverload<QAbstractSocket::SocketError>::of(&QWebSocket::error), this,
            [this](QAbstractSocket::SocketError) {
                if (m_wanted && m_socket.state() == QAbstractSocket::UnconnectedState)
                    scheduleReconnect();
            });
    connect(&m_socket, &QWebSocket::textMessageReceived, this, [this](const QString &text) {
        QString why;
        const auto message = decodeStreamMessage(text.toUtf8(), &why);
        if (message)
            Q_EMIT messageReceived(*message);
        else
            Q_EMIT messageRefused(why);
    });
}

StreamClient::~StreamClient()
{
    // The socket, destroyed after the timer, would announce its disconnection to a
    // half-destroyed client that then starts the dead timer: no more signals from it.
    m_wanted = false;
    m_socket.disconnect(this);
    m_socket.abort();
}

QUrl StreamClient::streamUrl(const QUrl &agentUrl)
{
    QUrl url = agentUrl;
    url.setScheme(agentUrl.scheme() == u"https" ? QStringLiteral("wss") : QStringLiteral("ws"));
    url.setPath(QStringLiteral("/api/v1/stream"));
    url.setQuery(QString());
    return url;
}

void StreamClient::open(const QUrl &agentUrl, const QByteArray &token)
{
    close();
    m_agentUrl = agentUrl;
    m_token = token;
    m_wanted = true;
    m_delayMs = kFirstDelayMs;
    connectNow();
}

void StreamClient::close()
{
    m_wanted = false;
    m_reconnectTimer.stop();
    if (m_socket.state() != QAbstractSocket::UnconnectedState)
        m_socket.abort();
    setState(State::Closed);
}

void StreamClient::connectNow()
{
    if (!m_wanted)
        return;
    QNetworkRequest request(streamUrl(m_agentUrl));
    request.setRawHeader(QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + m_token);
    setState(State::Connecting);
    m_socket.open(request);
}

void StreamClient::scheduleReconnect()
{
    if (m_reconnectTimer.isActive())
        return;
    m_waitMs = m_delayMs;
    m_delayMs = std::min(m_delayMs * 2, kLongestDelayMs);
    m_reconnectTimer.start(m_waitMs);
    setState(State::WaitingToReconnect);
}

void StreamClient::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace payonce::console
