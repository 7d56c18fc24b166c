#pragma once

#include <QByteArray>
#include <QString>

namespace payonce::bench {

/// A WebSocket client on /api/v1/stream that completes the opening handshake and then
/// never reads (the slow client of the benchmark): its receive buffer is 4 KiB, so the agent's
/// messages pile up on the agent's side of the socket, where the stream hub must
/// coalesce them or drop the client. Closed by the destructor.
class SlowStreamClient {
public:
    SlowStreamClient() = default;
    ~SlowStreamClient();
    SlowStreamClient(const SlowStreamClient &) = delete;
    SlowStreamClient &operator=(const SlowStreamClient &) = delete;

    /// Connects and sends the upgrade with `token` in the query; false and *error when the
    /// connection or the write failed.
    bool open(int port, const QByteArray &token, QString *error);

private:
    int m_fd = -1;
};

} // namespace payonce::bench
