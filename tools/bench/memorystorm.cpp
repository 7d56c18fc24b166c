#include "memorystorm.h"

#include "benchenvironment.h"
#include "httptestsupport.h"
#include "loadclient.h"
#include "processusage.h"
#include "workloads.h"

#include <QDateTime>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace payonce::bench {

namespace {
constexpr qint64 kPoolSize = 2000;
constexpr auto kSampleEvery = std::chrono::seconds(5);

struct RssSample {
    double atSeconds = 0;
    qint64 kib = 0;
};
} // namespace

int runMemoryStorm(const BenchOptions &options)
{
    BenchEnvironment::Options envOptions;
    envOptions.dialect = options.dialect;
    envOptions.redisServer = options.redisServer;
    envOptions.agentArguments = options.agentArguments;
    QString error;
    std::unique_ptr<BenchEnvironment> env = BenchEnvironment::start(envOptions, &error);
    if (!env || !putBenchSkus(env->agent().port(), 1, &error)) {
        std::fprintf(stderr, "payonce-bench: %s\n", qPrintable(error));
        return 1;
    }
    LoadOptions load;
    load.port = env->agent().port();
    load.connections = options.connections;
    load.threads = options.clientThreads;

    const QString prefix = QStringLiteral("M") + QString::number(QDateTime::currentMSecsSinceEpoch() % 100000000);
    std::vector<BenchOrder> orders;
    for (qint64 i = 0; i < kPoolSize; ++i)
        orders.push_back(BenchOrder{prefix + QStringLiteral("-") + QString::number(i), 1000 + i, {}, benchSkuOf(i, 1)});
    IndexedWorkload create(kPoolSize, false, [&](qint64 i) { return createOrderExchange(orders[std::size_t(i)]); });
    IndexedWorkload confirm(kPoolSize, false, [&](qint64 i) { return confirmExchange(&orders[std::size_t(i)]); });
    std::fprintf(stderr, "payonce-bench: preparing %lld confirmed payments ...\n", static_cast<long long>(kPoolSize));
    const LoadResult created = runLoad(load, create);
    const LoadResult confirmed = runLoad(load, confirm);
    if (created.failed + confirmed.failed > 0) {
        std::fprintf(stderr, "payonce-bench: preparation failed: %s\n",
                     qPrintable((created.failureSamples + confirmed.failureSamples).join(QStringLiteral("; "))));
        return 1;
    }

    const auto stormLength = std::chrono::duration_cast<std::chrono::milliseconds>(options.memoryStorm);
    // Warm-up: a minute, or a fifth of a shorter storm.
    const auto warmUp = std::min<std::chrono::milliseconds>(std::chrono::minutes(1), stormLength / 5);
    std::vector<RssSample> samples;
    std::mutex mutex;
    std::condition_variable stopped;
    bool done = false;
    const auto start = std::chrono::steady_clock::now();
    std::thread sampler([&] {
        std::unique_lock lock(mutex);
        while (!stopped.wait_for(lock, kSampleEvery, [&] { return done; })) {
            const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const RssSample sample{at, testsupport::procStatusKb(env->agent().pid(), "VmRSS")};
            std::fprintf(stderr, "payonce-bench: t=%6.0f s  agent VmRSS %lld KiB%s\n", at,
                         static_cast<long long>(sample.kib), at * 1000 < double(warmUp.count()) ? "  (warm-up)" : "");
            samples.push_back(sample);
        }
    });
    IndexedWorkload storm(kPoolSize, true, [&](qint64 i) -> std::unique_ptr<Exchange> {
        const BenchOrder &order = orders[std::size_t(i)];
        auto request = env->notifier().paidRequest(order.paymentNo, QStringLiteral("4200") + order.orderNo,
                                                   kOrderAmountFen);
        if (!request.ok())
            return nullptr;
        return notificationExchange(*request, NotificationExpectation::Either);
    });
    load.duration = stormLength;
    const LoadResult result = runLoad(load, storm);
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    stopped.notify_all();
    sampler.join();

    std::vector<qint64> kept;
    for (const RssSample &sample : samples) {
        if (sample.atSeconds * 1000 >= double(warmUp.count()))
            kept.push_back(sample.kib);
    }
    std::printf("memory storm: %s, %lld callbacks in %.0f s (%.0f/s), %lld errors; %zu RSS samples after a %.0f s "
                "warm-up\n",
                qPrintable(testsupport::dialectName(options.dialect)), static_cast<long long>(result.completed),
                result.seconds, result.seconds > 0 ? double(result.completed) / result.seconds : 0,
                static_cast<long long>(result.failed), kept.size(), double(warmUp.count()) / 1000);
    for (const QString &failure : result.failureSamples)
        std::printf("ERROR: %s\n", qPrintable(failure));
    if (kept.empty()) {
        std::printf("no sample after the warm-up: run longer\n");
        return 1;
    }
    const auto [minIt, maxIt] = std::minmax_element(kept.begin(), kept.end());
    double mean = 0;
    for (qint64 kib : kept)
        mean += double(kib);
    mean /= double(kept.size());
    const double deviation = std::max(double(*maxIt) - mean, mean - double(*minIt)) / mean * 100;
    std::printf("agent VmRSS min %lld KiB, max %lld KiB, mean %.0f KiB: within ±%.1f%% of the mean -> %s (target ±10%%)\n",
                static_cast<long long>(*minIt), static_cast<long long>(*maxIt), mean, deviation,
                deviation <= 10 ? "met" : "NOT met");
    return result.failed == 0 ? 0 : 1;
}

} // namespace payonce::bench
