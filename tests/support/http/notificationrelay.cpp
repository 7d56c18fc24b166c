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
        const qsizetype end = buffer->indexOf("\r\n\r\n");
        if (end < 0)
            return;
        CapturedRequest request;
        const QList<QByteArray> lines = buffer->left(end).split('\n');
        request.path = lines.value(0).split(' ').value(1);
        qsizetype length = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines.at(i).indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = lines.at(i).left(colon).trimmed();
            const QByteArray value = lines.at(i).mid(colon + 1).trimmed();
            request.headers.append({name, value});
            if (name.compare("Content-Length", Qt::CaseInsensitive) == 0)
                length = value.toLongLong();
        }
        if (buffer->size() < end + 4 + length)
            return;
        request.body = buffer->mid(end + 4, length);
        buffer->clear();
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
