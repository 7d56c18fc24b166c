#pragma once

#include "loadclient.h"

#include "core/common/result.h"

#include <QMutex>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

namespace payonce::sql {
class Database;
}

namespace payonce::bench {

/// An order the direct-SQL rows pay: what a confirm leaves behind (PAYING, its WeChat
/// payment record pending), one unit of its SKU, a coupon and 100 points to grant.
struct BenchSqlOrder {
    QString orderNo;
    QString paymentNo;
    qint64 userId = 0;
    qint64 amountFen = 100;
    QString skuId;
};

/// The SKU order `index` buys when orders are spread over `skus` of them.
QString benchSkuId(const QString &prefix, qint64 index, int skus);

/// Makes `skus` SKUs (stock for any run) and `count` orders through the agent's own SQL
/// adapters, on `threads` threads (untimed preparation).
core::Result<std::vector<BenchSqlOrder>> prepareBenchSqlOrders(sql::Database &database, const QString &prefix,
                                                               qint64 count, int skus, int threads);

/// Runs work(state, i) for i in [0, count) on `threads` threads, each with the state its
/// makeState() made on that thread (a connection, say: Qt Sql connections belong to their
/// thread) before the clock starts; the failures' first messages kept.
template <typename MakeState, typename Work>
LoadResult onThreadsWithState(int threads, qint64 count, MakeState makeState, Work work)
{
    using Clock = std::chrono::steady_clock;
    const int n = std::max(threads, 1);
    std::atomic<qint64> next{0};
    std::latch ready(n + 1);
    std::latch go(1);
    QMutex mutex;
    LoadResult result;
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t) {
        pool.emplace_back([&] {
            auto state = makeState();
            ready.count_down();
            go.wait();
            std::vector<qint64> latencies;
            qint64 failed = 0;
            QStringList failures;
            for (qint64 i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
                const Clock::time_point began = Clock::now();
                const core::Result<void> done = work(state.get(), i);
                if (done.ok()) {
                    latencies.push_back(
                        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - began).count());
                } else {
                    ++failed;
                    if (failures.size() < 10)
                        failures << done.error().internalMessage;
                }
            }
            QMutexLocker locker(&mutex);
            mergeShare(result, latencies, failed, failures);
        });
    }
    ready.arrive_and_wait();
    const Clock::time_point start = Clock::now();
    go.count_down();
    for (std::thread &thread : pool)
        thread.join();
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::sort(result.latenciesNs.begin(), result.latenciesNs.end());
    return result;
}

/// onThreadsWithState without a state.
template <typename Work>
LoadResult onThreads(int threads, qint64 count, Work work)
{
    return onThreadsWithState(
        threads, count, [] { return std::unique_ptr<int>(); }, [&](int *, qint64 i) { return work(i); });
}

} // namespace payonce::bench
