#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QThread>
#include <QUrl>

class QTcpServer;
class QTcpSocket;

namespace payonce::testsupport {

/// A minimal HTTP/1.1 webhook receiver on loopback, served by a thread of its own (so it
/// answers while the test blocks in a call of its own): records each request and answers
/// it with status() and Connection: close, or never answers when the status is 0.
/// Thread-safe.
class WebhookReceiver {
public:
    struct Request {
        QByteArray method;
        QByteArray path;
        QHash<QByteArray, QByteArray> headers; ///< lower-case names
        QByteArray body;
    };

    explicit WebhookReceiver(int status);
    ~WebhookReceiver();
    WebhookReceiver(const WebhookReceiver &) = delete;
    WebhookReceiver &operator=(const WebhookReceiver &) = delete;

    QUrl url(const QString &path) const;
    void setStatus(int status);
    int status() const;
    /// Every request received so far, in arrival order.
    QList<Request> requests() const;
    /// Those whose Idempotency-Key header is `key`.
    QList<Request> requestsWithKey(const QByteArray &key) const;

private:
    void onData(QTcpSocket *socket);

    QThread m_thread;
    QObject *m_context = nullptr;   ///< lives in m_thread
    QTcpServer *m_server = nullptr; ///< created, used and deleted in m_thread
    quint16 m_port = 0;
    QHash<QTcpSocket *, QByteArray> m_buffers; ///< m_thread only
    mutable QMutex m_mutex;
    int m_status;
    QList<Request> m_requests;
};

} // namespace payonce::testsupport
