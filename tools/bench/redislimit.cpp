#include "redislimit.h"

#include <QMutex>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace payonce::bench {

LoadResult runRedisLimit(int port, const QString &password, int connections, std::chrono::milliseconds duration,
                         qint64 count)
{
    using Clock = std::chrono::steady_clock;
    QMutex mutex;
    LoadResult result;
    std::atomic<qint64> issued{0};
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline = start + duration;
    auto more = [&] { return duration.count() > 0 ? Clock::now() < deadline : issued.fetch_add(1) < count; };
    std::vector<std::thread> threads;
    for (int t = 0; t < std::max(connections, 1); ++t) {
        threads.emplace_back([&] {
            std::vector<qint64> latencies;
            qint64 failed = 0;
            QString failure;
            redisContext *context = redisConnect("127.0.0.1", port);
            if (!context || context->err) {
                failure = QStringLiteral("cannot connect to Redis on port %1").arg(port);
                failed = 1;
            } else if (!password.isEmpty()) {
                auto *reply = static_cast<redisReply *>(
                    redisCommand(context, "AUTH %s", password.toUtf8().constData()));
                if (!reply || reply->type == REDIS_REPLY_ERROR) {
                    failure = QStringLiteral("Redis AUTH refused");
                    failed = 1;
                }
                if (reply)
                    freeReplyObject(reply);
            }
            while (failed == 0 && more()) {
                const Clock::time_point began = Clock::now();
                auto *reply = static_cast<redisReply *>(redisCommand(context, "PING"));
                const bool pong = reply && reply->type == REDIS_REPLY_STATUS;
                if (reply)
                    freeReplyObject(reply);
                if (!pong) {
                    ++failed;
                    failure = QStringLiteral("PING: no PONG (%1)").arg(QString::fromLocal8Bit(context->errstr));
                    break;
                }
                latencies.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - began).count());
            }
            if (context)
                redisFree(context);
            QMutexLocker locker(&mutex);
            mergeShare(result, latencies, failed, failure.isEmpty() ? QStringList() : QStringList{failure});
        });
    }
    for (std::thread &thread : threads)
        thread.join();
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::sort(result.latenciesNs.begin(), result.latenciesNs.end());
    return result;
}

} // namespace payonce::bench
