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
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace payonce::bench {

namespace {
constexpr qint64 kPoolSize = 2000;
constexpr auto kSampleEvery = std::chrono::seconds(5);
// A platform's retry re-sends the bytes it sent first; a copy is re-signed once it is this
// old, well inside the agent's ±300 s window, so re-sent copies stay answerable all storm.
constexpr auto kResignAfter = std::chrono::seconds(60);

/// What the storm sends for one order: every other send re-sends the order's current
/// signed copy byte for byte (the agent answers it from memory), the others are signed
/// afresh (new bytes: verified, and remembered in the agent's bounded caches), so both the
/// memory-first path and the caches' eviction run for the whole storm.
class StormCopies {
public:
    using Sign = std::function<core::Result<QByteArray>(qint64 index)>;
    explicit StormCopies(Sign sign) : m_sign(std::move(sign)), m_copies(std::size_t(kPoolSize)) {}

    core::Result<QByteArray> next(qint64 index)
    {
        Copy &copy = m_copies[std::size_t(index)];
        const auto now = std::chrono::steady_clock::now();
        {
            std::lock_guard lock(m_mutex);
            ++copy.sends;
            if (copy.sends % 2 == 0 && !copy.bytes.isEmpty() && now - copy.signedAt < kResignAfter) {
                ++m_resent;
                return copy.bytes;
            }
        }
        auto fresh = m_sign(index); // outside the lock: the client threads sign side by side
        if (!fresh.ok())
            return fresh;
        std::lock_guard lock(m_mutex);
        copy.bytes = fresh.value();
        copy.signedAt = now;
        return fresh;
    }
    qint64 resent() const
    {
        std::lock_guard lock(m_mutex);
        return m_resent;
    }

private:
    struct Copy {
        QByteArray bytes;
        std::chrono::steady_clock::time_point signedAt;
        qint64 sends = 0;
    };
    Sign m_sign;
    mutable std::mutex m_mutex;
    std::vector<Copy> m_copies;
    qint64 m_resent = 0;
};

struct RssSample {
    double atSeconds = 0;
    qint64 kib = 0;
};

struct RssTrend {
    double meanKib = 0;
    double slopeKibPerSecond = 0; ///< of the least-squares line through the samples
    double windowSeconds = 0;     ///< from the first sample to the last
};

RssTrend rssTrend(const std::vector<RssSample> &samples)
{
    RssTrend trend;
    const double n = double(samples.size());
    double meanT = 0;
    for (const RssSample &sample : samples) {
        meanT += sample.atSeconds;
        trend.meanKib += double(sample.kib);
    }
    meanT /= n;
    trend.meanKib /= n;
    double covariance = 0;
    double variance = 0;
    for (const RssSample &sample : samples) {
        covariance += (sample.atSeconds - meanT) * (double(sample.kib) - trend.meanKib);
        variance += (sample.atSeconds - meanT) * (sample.atSeconds - meanT);
    }
    trend.slopeKibPerSecond = variance > 0 ? covariance / variance : 0;
    trend.windowSeconds = samples.back().atSeconds - samples.front().atSeconds;
    return trend;
}
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
    StormCopies copies([&](qint64 i) {
        const BenchOrder &order = orders[std::size_t(i)];
        return env->notifier().paidRequest(order.paymentNo, QStringLiteral("4200") + order.orderNo, kOrderAmountFen);
    });
    IndexedWorkload storm(kPoolSize, true, [&](qint64 i) -> std::unique_ptr<Exchange> {
        auto request = copies.next(i);
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

    std::vector<RssSample> kept;
    for (const RssSample &sample : samples) {
        if (sample.atSeconds * 1000 >= double(warmUp.count()))
            kept.push_back(sample);
    }
    std::printf("memory storm: %s, %lld callbacks in %.0f s (%.0f/s), %lld errors; %zu RSS samples after a %.0f s "
                "warm-up\n",
                qPrintable(testsupport::dialectName(options.dialect)), static_cast<long long>(result.completed),
                result.seconds, result.seconds > 0 ? double(result.completed) / result.seconds : 0,
                static_cast<long long>(result.failed), kept.size(), double(warmUp.count()) / 1000);
    const std::map<QString, double> metrics = env->agent().scrapeMetrics();
    const auto metric = [&metrics](const char *name) {
        const auto it = metrics.find(QString::fromLatin1(name));
        return it == metrics.end() ? 0.0 : it->second;
    };
    std::printf("of them %lld re-sent byte for byte; the agent answered %.0f copies from memory and took %.0f "
                "verified copies without verifying them again\n",
                static_cast<long long>(copies.resent()), metric("payonce_callback_answered_from_memory_total"),
                metric("payonce_callback_verified_copies_reused_total"));
    for (const QString &failure : result.failureSamples)
        std::printf("ERROR: %s\n", qPrintable(failure));
    if (kept.empty()) {
        std::printf("no sample after the warm-up: run longer\n");
        return 1;
    }
    const auto byKib = [](const RssSample &a, const RssSample &b) { return a.kib < b.kib; };
    const auto [minIt, maxIt] = std::minmax_element(kept.begin(), kept.end(), byKib);
    const RssTrend trend = rssTrend(kept);
    const double deviation = std::max(double(maxIt->kib) - trend.meanKib, trend.meanKib - double(minIt->kib))
                             / trend.meanKib * 100;
    std::printf(
        "agent VmRSS min %lld KiB, max %lld KiB, mean %.0f KiB: within ±%.1f%% of the mean -> %s (target ±5%%)\n",
        static_cast<long long>(minIt->kib), static_cast<long long>(maxIt->kib), trend.meanKib, deviation,
        deviation <= 5 ? "met" : "NOT met");
    // The trend: the least-squares line through the samples after the warm-up, and what it
    // rises over that window as a share of the mean. Flat means that rise stays within 2%
    // (less than half the band above): a leak shows as a steady rise, a step as noise.
    const double risePercent = trend.slopeKibPerSecond * trend.windowSeconds / trend.meanKib * 100;
    std::printf(
        "agent VmRSS trend: slope %+.1f KiB/min, %+.2f%% of the mean over %.0f s -> %s (target: no upward trend, "
        "rise <= 2%%)\n",
        trend.slopeKibPerSecond * 60, risePercent, trend.windowSeconds, risePercent <= 2 ? "met" : "NOT met");
    return result.failed == 0 ? 0 : 1;
}

} // namespace payonce::bench
