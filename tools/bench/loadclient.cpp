#include "loadclient.h"

#include <QMutex>

#include <algorithm>
#include <thread>

#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace payonce::bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kFailureSamples = 10;

int openConnection(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(quint16(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/// Whether the agent has closed (or reset) the connection on fd: read without waiting and
/// without taking anything. A keep-alive connection is checked before it is reused, as
/// HTTP clients do, so a close the agent made while it was idle is no dropped request.
bool closedByPeer(int fd)
{
    char byte = 0;
    const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/// A complete reply at the front of `in`: parsed and removed. False while incomplete.
bool takeReply(QByteArray &in, HttpReply *reply, bool *closeAfter)
{
    const qsizetype headEnd = in.indexOf("\r\n\r\n");
    if (headEnd < 0)
        return false;
    const QByteArray head = in.left(headEnd);
    qsizetype contentLength = 0;
    QByteArray layer;
    *closeAfter = false;
    const QList<QByteArray> lines = head.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length")
            contentLength = value.toLongLong();
        else if (name == "x-payonce-layer")
            layer = value;
        else if (name == "connection" && value.toLower() == "close")
            *closeAfter = true;
    }
    if (in.size() < headEnd + 4 + contentLength)
        return false;
    reply->status = lines.value(0).split(' ').value(1).toInt();
    reply->layer = layer;
    reply->body = in.mid(headEnd + 4, contentLength);
    in.remove(0, headEnd + 4 + contentLength);
    return true;
}

struct Connection {
    int fd = -1;
    std::unique_ptr<Exchange> exchange;
    QByteArray out;
    qsizetype sent = 0;
    QByteArray in;
    Clock::time_point started;
    bool finished = false; ///< no more work for this connection
};

struct Shared {
    LoadOptions options;
    Workload *workload = nullptr;
    Clock::time_point deadline;
    bool useDeadline = false;
    QMutex mutex;
    LoadResult result;
    Clock::time_point lastReply;
};

void runThread(Shared &shared, int connectionCount)
{
    std::vector<Connection> connections(std::size_t(std::max(connectionCount, 0)));
    LoadShare share;
    Clock::time_point lastReply{};
    auto fail = [&](Connection &c, const QString &why) {
        ++share.failed;
        if (share.failures.size() < kFailureSamples)
            share.failures << why;
        c.exchange.reset();
    };
    auto reopen = [&](Connection &c) {
        if (c.fd >= 0)
            ::close(c.fd);
        c.fd = openConnection(shared.options.port);
        c.in.clear();
        if (c.fd < 0) {
            if (c.exchange)
                fail(c, QStringLiteral("cannot connect to port %1").arg(shared.options.port));
            c.finished = true;
        }
    };
    for (Connection &c : connections)
        reopen(c);

    std::vector<pollfd> polled;
    std::vector<Connection *> owners;
    for (;;) {
        for (Connection &c : connections) {
            if (c.finished || c.exchange)
                continue;
            if (shared.useDeadline && Clock::now() >= shared.deadline) {
                c.finished = true;
                continue;
            }
            c.exchange = shared.workload->next();
            if (!c.exchange) {
                c.finished = true;
                continue;
            }
            if (closedByPeer(c.fd)) {
                ++share.idleClosesSeen;
                reopen(c);
                if (!c.exchange)
                    continue;
            }
            c.out = c.exchange->firstRequest();
            c.sent = 0;
            c.started = Clock::now();
        }
        polled.clear();
        owners.clear();
        for (Connection &c : connections) {
            if (!c.exchange)
                continue;
            polled.push_back(pollfd{c.fd, short(c.sent < c.out.size() ? POLLOUT : POLLIN), 0});
            owners.push_back(&c);
        }
        if (polled.empty())
            break;
        if (::poll(polled.data(), nfds_t(polled.size()), 200) < 0 && errno != EINTR)
            break;
        for (std::size_t i = 0; i < polled.size(); ++i) {
            Connection &c = *owners[i];
            if (!polled[i].revents)
                continue;
            if (c.sent < c.out.size()) {
                const ssize_t n = ::send(c.fd, c.out.constData() + c.sent, std::size_t(c.out.size() - c.sent),
                                         MSG_NOSIGNAL);
                if (n > 0) {
                    if (c.sent == 0)
                        ++share.requestsSent;
                    c.sent += n;
                } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                    fail(c, QStringLiteral("send failed: %1").arg(QString::fromLocal8Bit(strerror(errno))));
                    reopen(c);
                }
                continue;
            }
            char buffer[16384];
            const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                fail(c, QStringLiteral("connection closed by the agent with a request in flight"));
                reopen(c);
                continue;
            }
            if (n < 0)
                continue;
            c.in.append(buffer, n);
            HttpReply reply;
            bool closeAfter = false;
            if (!takeReply(c.in, &reply, &closeAfter))
                continue;
            ++share.answersReceived;
            lastReply = Clock::now();
            const ExchangeStep step = c.exchange->onReply(reply);
            switch (step.kind) {
            case ExchangeStep::Kind::Next:
                c.out = step.request;
                c.sent = 0;
                break;
            case ExchangeStep::Kind::Done:
                share.latencies.push_back(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(lastReply - c.started).count());
                c.exchange.reset();
                break;
            case ExchangeStep::Kind::Failed: fail(c, step.failure); break;
            }
            if (closeAfter) {
                if (c.exchange)
                    fail(c, QStringLiteral("the agent closed the connection between two requests of one operation"));
                reopen(c);
            }
        }
    }
    for (Connection &c : connections) {
        if (c.fd >= 0)
            ::close(c.fd);
    }
    QMutexLocker locker(&shared.mutex);
    mergeShare(shared.result, share);
    shared.lastReply = std::max(shared.lastReply, lastReply);
}

} // namespace

void mergeShare(LoadResult &total, const LoadShare &share)
{
    total.completed += qint64(share.latencies.size());
    total.failed += share.failed;
    total.requestsSent += share.requestsSent;
    total.answersReceived += share.answersReceived;
    total.idleClosesSeen += share.idleClosesSeen;
    total.latenciesNs.insert(total.latenciesNs.end(), share.latencies.begin(), share.latencies.end());
    for (const QString &failure : share.failures) {
        if (total.failureSamples.size() < kFailureSamples)
            total.failureSamples << failure;
    }
}

void mergeShare(LoadResult &total, const std::vector<qint64> &latencies, qint64 failed, const QStringList &failures)
{
    mergeShare(total, LoadShare{latencies, failed, 0, 0, 0, failures});
}

LoadResult runLoad(const LoadOptions &options, Workload &workload)
{
    Shared shared;
    shared.options = options;
    shared.workload = &workload;
    const int threadCount = std::clamp(options.threads, 1, std::max(options.connections, 1));
    const Clock::time_point start = Clock::now();
    shared.useDeadline = options.duration.count() > 0;
    shared.deadline = start + options.duration;
    shared.lastReply = start;
    std::vector<std::thread> threads;
    for (int t = 0; t < threadCount; ++t) {
        // The connections spread evenly: the first threads take one more when it does not divide.
        const int count = options.connections / threadCount + (t < options.connections % threadCount ? 1 : 0);
        threads.emplace_back([&shared, count] { runThread(shared, count); });
    }
    for (std::thread &thread : threads)
        thread.join();
    LoadResult result = std::move(shared.result);
    result.overHttp = true;
    result.seconds = std::chrono::duration<double>(shared.lastReply - start).count();
    std::sort(result.latenciesNs.begin(), result.latenciesNs.end());
    return result;
}

} // namespace payonce::bench
