#include "webhookreceiver.h"

#include "receivedrequest.h"

#include <QTcpServer>
#include <QTcpSocket>

namespace payonce::testsupport {

WebhookReceiver::WebhookReceiver(int status) : m_status(status)
{
    m_context = new QObject;
    m_context->moveToThread(&m_thread);
    m_thread.start();
    QMetaObject::invokeMethod(
        m_context,
        [this] {
            m_server = new QTcpServer;
            m_server->listen(QHostAddress::LocalHost);
            m_port = m_server->serverPort();
            QObject::connect(m_server, &QTcpServer::newConnection, m_server, [this] {
                while (QTcpSocket *socket = m_server->nextPendingConnection()) {
                    socket->setParent(m_server);
                    QObject::connect(socket, &QTcpSocket::readyRead, m_server, [this, socket] { onData(socket); });
                }
            });
        },
        Qt::BlockingQueuedConnection);
}

WebhookReceiver::~WebhookReceiver()
{
    QMetaObject::invokeMethod(
        m_context, [this] { delete m_server; }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
    delete m_context;
}

QUrl WebhookReceiver::url(const QString &path) const
{
    return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_port).arg(path));
}

void WebhookReceiver::setStatus(int status)
{
    QMutexLocker lock(&m_mutex);
    m_status = status;
}

int WebhookReceiver::status() const
{
    QMutexLocker lock(&m_mutex);
    return m_status;
}

QList<WebhookReceiver::Request> WebhookReceiver::requests() const
{
    QMutexLocker lock(&m_mutex);
    return m_requests;
}

QList<WebhookReceiver::Request> WebhookReceiver::requestsWithKey(const QByteArray &key) const
{
    QList<Request> matching;
    for (const Request &r : requests()) {
        if (r.headers.value("idempotency-key") == key)
            matching.append(r);
    }
    return matching;
}

void WebhookReceiver::onData(QTcpSocket *socket)
{
    QByteArray &buffer = m_buffers[socket];
    buffer += socket->readAll();
    const std::optional<ReceivedRequest> taken = takeRequest(buffer);
    if (!taken)
        return;
    m_buffers.remove(socket);
    Request request{taken->method, taken->path, {}, taken->body};
    for (const auto &[name, value] : taken->headers)
        request.headers.insert(name.toLower(), value);
    int status = 0;
    {
        QMutexLocker lock(&m_mutex);
        m_requests.append(request);
        status = m_status;
    }
    if (status == 0)
        return;
    socket->write("HTTP/1.1 " + QByteArray::number(status) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    socket->disconnectFromHost();
}

} // namespace payonce::testsupport
