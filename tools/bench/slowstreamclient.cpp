#include "slowstreamclient.h"

#include <QRandomGenerator>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace payonce::bench {

SlowStreamClient::~SlowStreamClient()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

bool SlowStreamClient::open(int port, const QByteArray &token, QString *error)
{
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // Small before connect(), so the window the agent sees is small from the start.
    const int small = 4096;
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(quint16(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (m_fd < 0 || ::connect(m_fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        *error = QStringLiteral("slow stream client: connect: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    }
    quint32 key[4];
    QRandomGenerator::global()->fillRange(key);
    const QByteArray request = "GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port)
                               + "\r\nAuthorization: Bearer " + token
                               + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                               + "Sec-WebSocket-Key: "
                               + QByteArray(reinterpret_cast<const char *>(key), sizeof key).toBase64() + "\r\n\r\n";
    if (::send(m_fd, request.constData(), std::size_t(request.size()), MSG_NOSIGNAL) != request.size()) {
        *error = QStringLiteral("slow stream client: the upgrade request was not sent");
        return false;
    }
    return true;
}

} // namespace payonce::bench
