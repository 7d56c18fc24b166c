#pragma once

#include "shared/streammessage.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <QWebSocket>

namespace payonce::console {

/// The agent's live stream (GET /api/v1/stream as a WebSocket), decoded with shared/'s
/// codec. Reconnects by itself after any loss with a doubling delay (0.5 s up to 30 s),
/// back to the shortest once a connection is open again. Runs on the UI thread; nothing
/// in it blocks.
class StreamClient : public QObject {
    Q_OBJECT
public:
    enum class State {
        Closed,
        Connecting,
        Live,
        WaitingToReconnect
    };
    Q_ENUM(State)

    explicit StreamClient(QObject *parent = nullptr);
    ~StreamClient() override;

    /// Opens ws(s)://host:port/api/v1/stream for the agent at agentUrl (http or https).
    void open(const QUrl &agentUrl, const QByteArray &token);
    /// Closes without reconnecting.
    void close();

    State state() const { return m_state; }
    /// While waiting to reconnect: the length of this wait; otherwise the wait that a loss
    /// would start now (the shortest again once a connection opened).
    int reconnectDelayMs() const { return m_state == State::WaitingToReconnect ? m_waitMs : m_delayMs; }
    static QUrl streamUrl(const QUrl &agentUrl);

Q_SIGNALS:
    void messageReceived(const payonce::StreamMessage &message);
    void stateChanged(payonce::console::StreamClient::State state);
    /// A frame the codec refused (the agent and console disagree on the contract).
    void messageRefused(const QString &reason);

private:
    void connectNow();
    void setState(State state);
    void scheduleReconnect();

    QWebSocket m_socket;
    QTimer m_reconnectTimer;
    QUrl m_agentUrl;
    QByteArray m_token;
    State m_state = State::Closed;
    int m_delayMs = 0; ///< the next wait
    int m_waitMs = 0;  ///< the wait in progress
    bool m_wanted = false;
};

} // namespace payonce::console
