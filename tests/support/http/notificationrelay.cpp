#include "notificationrelay.h"

#include <QTcpSocket>

#include <memory>

namespace payonce::testsupport {

NotificationRelay::NotificationRelay()
{
    m_server.listen(QHostAddress::LocalHost, 0);
    QObject::connect(&m_server, &QTcpServer::newConnection, &m_server, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection())
            accept(socket);
    });
}

void NotificationRelay::accept(QTcpSocket *socket)
{
    auto buffer = std::make_shared<QByteArray>();
    QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
        *buffer += socket->readAll();
        const std::optional<CapturedRequest> taken = takeRequest(*buffer);
        if (!taken)
            return;
        const CapturedRequest &request = *taken;
        const bool alipay = request.path.endsWith("/alipay");
        captured.append(request);
        const QByteArray body = alipay ? QByteArray("failure") : QByteArray("{\"code\":\"FAIL\",\"message\":\"busy\"}");
        socket->write(QByteArray(alipay ? "HTTP/1.1 200 OK" : "HTTP/1.1 500 Internal Server Error")
                      + "\r\nContent-Type: text/plain\r\nContent-Length: " + QByteArray::number(body.size())
                      + "\r\nConnection: close\r\n\r\n" + body);
        socket->disconnectFromHost();
    });
}

QByteArray replayOf(const CapturedRequest &request)
{
    QByteArray out = "POST " + request.path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto &[name, value] : request.headers) {
        if (name.compare("Host", Qt::CaseInsensitive) == 0 || name.compare("Connection", Qt::CaseInsensitive) == 0)
            continue;
        out += name + ": " + value + "\r\n";
    }
    return out + "Connection: close\r\n\r\n" + request.body;
}

} // namespace payonce::testsupport
