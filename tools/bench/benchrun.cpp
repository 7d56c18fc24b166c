#include "benchrun.h"

#include "benchenvironment.h"
#include "directsqllimit.h"
#include "historypreload.h"
#include "httptestsupport.h"
#include "paidtransactionfloor.h"
#include "perfrecording.h"
#include "processtools.h"
#include "processusage.h"
#include "redislimit.h"
#include "slowstreamclient.h"
#include "workloads.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QMutex>
#include <QThread>

#include <atomic>
#include <thread>

namespace payonce::bench {

namespace {

/// The agent's worker_threads (its default; the benchmark leaves it): how many threads
/// of the agent run database work at once.
constexpr int kAgentWorkerThreads = 8;

/// A preloaded history spreads over this many days; a tenth of its deliveries is "a day".
constexpr int kPreloadDays = 10;
/// The agent's retention.deliveries_days (its default): the aged day is one day older.
constexpr int kDeliveriesRetentionDays = 90;
constexpr qint64 kDayMs = 24LL * 3600 * 1000;

/// Hands out `inner`'s operations until `stop` is set (then none, and the phase ends).
class StoppableWorkload final : public Workload {
public:
    StoppableWorkload(Workload &inner, const std::atomic<bool> &stop) : m_inner(inner), m_stop(stop) {}
    std::unique_ptr<Exchange> next() override { return m_stop ? nullptr : m_inner.next(); }

private:
    Workload &m_inner;
    const std::atomic<bool> &m_stop;
};

double rateOf(const LoadResult &result)
{
    return result.seconds > 0 ? double(result.completed) / result.seconds : 0;
}

/// What the table adds to a phase's title for a later round.
QString roundTitle(const QString &round)
{
    return round.isEmpty() ? QString() : QStringLiteral(", history preloaded");
}

/// A prefix unique to this run, so order numbers never meet an earlier run's.
QString runPrefix()
{
    return QStringLiteral("B") + QString::number(QDateTime::currentMSecsSinceEpoch() % 100000000);
}

class Runner {
public:
    Runner(const BenchOptions &options, BenchEnvironment &env, BenchReport &report)
        : m_options(options), m_env(env), m_report(report), m_prefix(runPrefix()), m_agentPid(env.agent().pid())
    {
    }

    void run();

private:
    /// The time or count bound of a timed phase, over the load client.
    LoadOptions loadOptions(bool timeBound) const
    {
        LoadOptions load;
        load.port = m_env.agent().port();
        load.connections = m_options.connections;
        load.threads = m_options.clientThreads;
        if (timeBound && !m_options.requests)
            load.duration = m_options.duration;
        return load;
    }
    /// Runs a phase and records it (with its CPU) unless `record` is false.
    LoadResult measure(const QString &key, const QString &title, const QString &limitKey,
                       const std::function<LoadResult()> &phase, bool record = true)
    {
        if (m_agentGone) {
            std::fprintf(stderr, "payonce-bench: %s skipped: the agent is gone\n", qPrintable(title));
            return LoadResult{};
        }
        std::fprintf(stderr, "payonce-bench: %s ...\n", qPrintable(title));
        std::unique_ptr<PerfRecording> perf;
        if (!m_options.perfDir.isEmpty() && (key == u"unique_callbacks" || key == u"duplicate_callbacks")) {
            QString error;
            perf = PerfRecording::start(m_env.agent().pid(), m_options.perfDir, key, &error);
            if (!perf)
                m_report.problems << error;
        }
        CpuWindow cpu(m_env.agent().pid(), m_env.databaseServerPid());
        cpu.start();
        LoadResult result = phase();
        cpu.stop(result.seconds);
        if (perf) {
            QString error;
            if (perf->finish(&error))
                std::fprintf(stderr, "payonce-bench:   profile in %s\n", qPrintable(perf->reportPath()));
            else
                m_report.problems << error;
        }
        (void)m_env.agent().output(); // drain the agent's pipe between phases
        if (record) {
            PhaseFigures figures{key, title, result, cpu.benchShareOfMachine(), cpu.agentCores(), limitKey};
            figures.serverCpuSeconds = cpu.serverCpuSeconds();
            m_report.phases.append(figures);
        }
        std::fprintf(stderr,
                     "payonce-bench:   %lld ops in %.2f s, %lld errors, %lld dropped, %lld idle connections "
                     "found closed by the agent\n",
                     static_cast<long long>(result.completed), result.seconds, static_cast<long long>(result.failed),
                     static_cast<long long>(result.dropped()), static_cast<long long>(result.idleClosesSeen));
        noticeAgentGone(title);
        return result;
    }
    /// An agent that died during a phase took the requests in flight on its connections with
    /// it: they read as dropped ("connection closed by the agent"), which is how a crash was
    /// once mistaken for closed connections (docs/benchmark.md, "What dropped requests once").
    /// So its death is named, with its last output, and no later phase runs against it.
    void noticeAgentGone(const QString &title)
    {
        if (testsupport::detail::pidAlive(m_agentPid))
            return;
        m_agentGone = true;
        m_report.problems << QStringLiteral("the agent (pid %1) was gone after the phase \"%2\": the requests in "
                                            "flight on its connections were lost with it (its death, not connections "
                                            "it closed); no phase ran after it. A crash leaves a line in the kernel "
                                            "log, and a core where core dumps are on. The agent's last output:\n%3")
                                 .arg(m_agentPid)
                                 .arg(title, m_env.agent().output().right(2000));
    }
    BenchOrder orderAt(qint64 index) const
    {
        return BenchOrder{m_prefix + QStringLiteral("-") + QString::number(index),
                          1000 + index,
                          {},
                          benchSkuOf(index, m_options.skus)};
    }
    bool callbackRound(const QString &round);
    bool prepareOrders(const QString &round);
    bool signNotifications();
    void uniqueCallbacks(const QString &round);
    void duplicateCallbacks(const QString &round);
    void limits();
    void historyRounds();
    void retentionRound();
    double prunedDeliveries() const;
    std::vector<const QByteArray *> sent() const;

    const BenchOptions &m_options;
    BenchEnvironment &m_env;
    BenchReport &m_report;
    QString m_prefix; ///< the current round's order numbers start with it
    std::vector<BenchOrder> m_orders;
    std::vector<QByteArray> m_notifications; ///< one per confirmed order, in order
    qint64 m_sentUnique = 0;                 ///< how many of them the unique phases sent
    qint64 m_paidUnique = 0;
    const qint64 m_agentPid;  ///< the agent's, taken at the start (QProcess forgets it once it has died)
    bool m_agentGone = false; ///< the agent died during a phase: every later phase is skipped
};

bool Runner::prepareOrders(const QString &round)
{
    QString error;
    if (round.isEmpty() && !putBenchSkus(m_env.agent().port(), m_options.skus, &error)) {
        m_report.problems << error;
        return false;
    }
    // A count-bound run needs one order per confirm; a time-bound one as many as the
    // agent creates in one phase's time (creating is cheaper than confirming).
    const qint64 wanted = m_options.requests ? *m_options.requests * (m_options.slowStreamClient ? 2 : 1)
                                             : std::numeric_limits<qint64>::max();
    IndexedWorkload create(wanted, false, [this](qint64 i) { return createOrderExchange(orderAt(i)); });
    // Shown in the table (its requests and dropped count like any phase's), never a limit.
    const LoadResult created = measure(QStringLiteral("create_orders") + round,
                                       QStringLiteral("create orders (preparation)") + roundTitle(round), {},
                                       [&] { return runLoad(loadOptions(true), create); });
    m_report.phases.last().preparation = true;
    if (created.failed > 0) {
        m_report.problems << QStringLiteral("creating orders failed %1 times: %2")
                                 .arg(created.failed)
                                 .arg(created.failureSamples.join(QStringLiteral("; ")));
        return false;
    }
    m_orders.clear();
    m_orders.reserve(std::size_t(created.completed));
    for (qint64 i = 0; i < created.completed; ++i)
        m_orders.push_back(orderAt(i));
    return true;
}

bool Runner::signNotifications()
{
    std::vector<const BenchOrder *> confirmed;
    for (const BenchOrder &order : m_orders) {
        if (!order.paymentNo.isEmpty())
            confirmed.push_back(&order);
    }
    m_notifications.assign(confirmed.size(), {});
    std::atomic<std::size_t> next{0};
    QMutex mutex;
    QStringList failures;
    std::vector<std::thread> signers;
    for (int t = 0; t < coreCount(); ++t) {
        signers.emplace_back([&] {
            for (std::size_t i = next++; i < confirmed.size(); i = next++) {
                auto request = m_env.notifier().paidRequest(
                    confirmed[i]->paymentNo, QStringLiteral("4200") + m_prefix + QString::number(i), kOrderAmountFen);
                if (request.ok()) {
                    m_notifications[i] = std::move(request).value();
                } else {
                    QMutexLocker locker(&mutex);
                    failures << request.error().internalMessage;
                }
            }
        });
    }
    for (std::thread &signer : signers)
        signer.join();
    if (!failures.isEmpty()) {
        m_report.problems << QStringLiteral("signing notifications failed: ") + failures.constFirst();
        return false;
    }
    return !m_notifications.empty();
}

void Runner::uniqueCallbacks(const QString &round)
{
    const bool slowStreamToo = m_options.slowStreamClient && round.isEmpty();
    const qint64 total = qint64(m_notifications.size());
    const qint64 firstPart = slowStreamToo ? total / 2 : total;
    // The first round's unique callbacks are a ratio of the floor (set once it is measured),
    // a later round's of the first round's.
    const QString limit = round.isEmpty() ? QStringLiteral("direct_sql") : QStringLiteral("unique_callbacks");
    auto sendRange = [&](qint64 from, qint64 count, const QString &key, const QString &title) {
        IndexedWorkload unique(count, false, [this, from](qint64 i) {
            return notificationExchange(m_notifications[std::size_t(from + i)], NotificationExpectation::FirstTime);
        });
        const LoadResult result = measure(key, title, limit, [&] { return runLoad(loadOptions(true), unique); });
        const qint64 sentNow = std::min(count, result.completed + result.failed);
        // The notifications are sent in index order, so the first sentNow of the range went out.
        return std::pair<LoadResult, qint64>(result, sentNow);
    };
    auto [without, sentWithout] = sendRange(0, firstPart, QStringLiteral("unique_callbacks") + round,
                                            QStringLiteral("(a) unique callbacks") + roundTitle(round));
    m_sentUnique = sentWithout;
    m_paidUnique = without.completed;
    if (!slowStreamToo || m_agentGone)
        return;

    SlowStreamFigures slow;
    slow.intervalMs = m_options.streamIntervalMs;
    slow.rateWithout = rateOf(without);
    slow.rssBeforeKiB = testsupport::procStatusKb(m_env.agent().pid(), "VmRSS");
    SlowStreamClient client;
    QString error;
    if (!client.open(m_env.agent().port(), "view-token", &error)) {
        m_report.problems << error;
        return;
    }
    QThread::msleep(500); // the upgrade answered and the first messages queued
    // The second half: sent after the first so the duplicate phase can use both ranges.
    std::vector<QByteArray> rest(m_notifications.begin() + firstPart, m_notifications.end());
    std::vector<QByteArray> firstSent(m_notifications.begin(), m_notifications.begin() + sentWithout);
    auto [with, sentWith] = sendRange(firstPart, total - firstPart, QStringLiteral("unique_callbacks_slow_stream"),
                                      QStringLiteral("(a') unique callbacks, slow stream client"));
    slow.rateWith = rateOf(with);
    slow.secondsWithClient = with.seconds + 0.5;
    slow.rssAfterKiB = testsupport::procStatusKb(m_env.agent().pid(), "VmRSS");
    const auto samples = testsupport::parseMetricSamples(m_env.agent().call("GET", QStringLiteral("/metrics")).body);
    auto sample = [&](const char *name) {
        const auto it = samples.find(QString::fromLatin1(name));
        return it == samples.end() ? 0.0 : it->second;
    };
    slow.coalesced = sample("payonce_stream_coalesced_total");
    slow.dropped = sample("payonce_stream_dropped_total");
    m_report.slowStream = slow;
    // Keep the sent notifications contiguous for the duplicate phase.
    firstSent.insert(firstSent.end(), rest.begin(), rest.begin() + sentWith);
    m_notifications = std::move(firstSent);
    m_sentUnique = sentWithout + sentWith;
    m_paidUnique += with.completed;
}

bool Runner::callbackRound(const QString &round)
{
    if (!prepareOrders(round))
        return false;

    const qint64 confirmCount = qint64(m_orders.size());
    IndexedWorkload confirms(confirmCount, false,
                             [this](qint64 i) { return confirmExchange(&m_orders[std::size_t(i)]); });
    measure(QStringLiteral("confirms") + round, QStringLiteral("(c) confirms (token + confirm)") + roundTitle(round),
            round.isEmpty() ? QStringLiteral("healthz") : QStringLiteral("confirms"),
            [&] { return runLoad(loadOptions(true), confirms); });
    if (m_agentGone)
        return false;

    std::fprintf(stderr, "payonce-bench: signing the notifications ...\n");
    if (!signNotifications()) {
        m_report.problems << QStringLiteral("no confirmed payment to notify");
        return false;
    }
    uniqueCallbacks(round);
    if (m_sentUnique == 0 || m_agentGone)
        return false;
    duplicateCallbacks(round);
    return true;
}

void Runner::duplicateCallbacks(const QString &round)
{
    // Every re-send: any layer but "none" may stop it, never a second processing. Count-
    // bound: the sent ones in turn until the count; time-bound: cycling until the time is up.
    const qint64 sentCount = m_sentUnique;
    IndexedWorkload duplicates(m_options.requests.value_or(sentCount), !m_options.requests.has_value(),
                               [this, sentCount](qint64 i) {
                                   return notificationExchange(m_notifications[std::size_t(i % sentCount)],
                                                               NotificationExpectation::Duplicate);
                               });
    measure(QStringLiteral("duplicate_callbacks") + round,
            QStringLiteral("(b) duplicate callbacks") + roundTitle(round),
            round.isEmpty() ? QStringLiteral("healthz") : QStringLiteral("duplicate_callbacks"),
            [&] { return runLoad(loadOptions(true), duplicates); });
}

void Runner::run()
{
    if (!callbackRound({}) || m_agentGone)
        return;
    limits();
    if (m_options.preloads() && !m_agentGone)
        historyRounds();
}

void Runner::limits()
{
    IndexedWorkload healthz(m_options.requests ? *m_options.requests : 1, !m_options.requests.has_value(),
                            [](qint64) { return healthzExchange(); });
    measure(QStringLiteral("healthz"), QStringLiteral("limit: GET /healthz"), {},
            [&] { return runLoad(loadOptions(true), healthz); });
    // Diagnostic: the agent's own statements issued directly through its SQL adapters, at
    // the benchmark's concurrency (one thread per connection) and at the agent's own (its
    // worker_threads, the only threads that touch its database).
    DirectSqlOptions sql;
    sql.databaseUrl = m_env.databaseUrl();
    sql.count = std::max<qint64>(m_paidUnique, 1);
    sql.sampleRequest = m_notifications.front();
    sql.threads = m_options.connections;
    sql.skus = m_options.skus;
    sql.prefix = m_prefix + QStringLiteral("S");
    const QString wide = QStringLiteral("direct_sql");
    const QString narrow = QStringLiteral("direct_sql_%1").arg(kAgentWorkerThreads);
    measure(wide, QStringLiteral("diagnostic: agent's callback SQL, direct, %1 threads").arg(sql.threads), {},
            [&] { return runDirectSqlLimit(sql); });
    sql.threads = kAgentWorkerThreads;
    sql.prefix = m_prefix + QStringLiteral("W");
    measure(narrow, QStringLiteral("diagnostic: agent's callback SQL, direct, %1 threads").arg(sql.threads), {},
            [&] { return runDirectSqlLimit(sql); });

    // The floor the unique callbacks are a ratio of: the paid transaction written by hand
    // (one BEGIN…COMMIT, statements prepared once), at the benchmark's concurrency and at
    // the agent's; the faster of the two (many threads queueing on one stock row or on
    // SQLite's single writer can do less than a few). The agent's own statements above stay diagnostic.
    PaidFloorOptions floor;
    floor.databaseUrl = m_env.databaseUrl();
    floor.count = std::max<qint64>(m_paidUnique, 1);
    floor.skus = m_options.skus;
    floor.threads = m_options.connections;
    floor.prefix = m_prefix + QStringLiteral("F");
    const QString floorWide = QStringLiteral("floor_paid");
    const QString floorNarrow = QStringLiteral("floor_paid_%1").arg(kAgentWorkerThreads);
    const double floorWideRate = rateOf(
        measure(floorWide, QStringLiteral("floor: paid transaction by hand, %1 threads").arg(floor.threads), {},
                [&] { return runPaidTransactionFloor(floor); }));
    floor.threads = kAgentWorkerThreads;
    floor.prefix = m_prefix + QStringLiteral("G");
    const double floorNarrowRate = rateOf(
        measure(floorNarrow, QStringLiteral("floor: paid transaction by hand, %1 threads").arg(floor.threads), {},
                [&] { return runPaidTransactionFloor(floor); }));
    if (PhaseFigures *unique = m_report.phase(QStringLiteral("unique_callbacks")))
        unique->limitKey = floorNarrowRate > floorWideRate ? floorNarrow : floorWide;
    if (PhaseFigures *slow = m_report.phase(QStringLiteral("unique_callbacks_slow_stream")))
        slow->limitKey = floorNarrowRate > floorWideRate ? floorNarrow : floorWide;

    if (m_env.redisPort() > 0) {
        measure(QStringLiteral("redis_ping"), QStringLiteral("limit: Redis PING"), {}, [&] {
            return runRedisLimit(m_env.redisPort(), m_env.redisPassword(), m_options.connections,
                                 m_options.requests ? std::chrono::milliseconds(0) : m_options.duration,
                                 m_options.requests.value_or(0));
        });
    }
}

/// The history rounds (--preload-deliveries): the same callbacks against a database the
/// size of a busy season, then a day of deliveries past retention pruned while they run.
void Runner::historyRounds()
{
    const QString round = QStringLiteral("_preloaded");
    std::fprintf(stderr, "payonce-bench: preloading %lld deliveries and %lld paid orders ...\n",
                 static_cast<long long>(m_options.preloadDeliveries), static_cast<long long>(m_options.preloadOrders));
    HistoryPreloadOptions preload;
    preload.databaseUrl = m_env.databaseUrl();
    preload.deliveries = m_options.preloadDeliveries;
    preload.paidOrders = m_options.preloadOrders;
    preload.days = kPreloadDays;
    preload.nowMs = QDateTime::currentMSecsSinceEpoch();
    preload.prefix = m_prefix + QStringLiteral("L");
    QElapsedTimer took;
    took.start();
    auto loaded = preloadHistory(preload);
    if (!loaded.ok()) {
        m_report.problems << QStringLiteral("preloading the history failed: ") + loaded.error().internalMessage;
        return;
    }
    HistoryFigures history;
    history.deliveryRows = loaded->deliveries;
    history.paidOrderRows = loaded->paidOrders;
    history.deliveries = m_options.preloadDeliveries;
    history.paidOrders = m_options.preloadOrders;
    history.days = kPreloadDays;
    history.preloadSeconds = double(took.elapsed()) / 1000;
    m_report.history = history;

    m_prefix += QStringLiteral("H");
    if (!callbackRound(round))
        return;
    retentionRound();
}

double Runner::prunedDeliveries() const
{
    const auto samples = testsupport::parseMetricSamples(m_env.agent().call("GET", QStringLiteral("/metrics")).body);
    const auto it = samples.find(QStringLiteral("payonce_retention_pruned_total{table=\"deliveries\"}"));
    return it == samples.end() ? -1 : it->second;
}

/// A day of deliveries past retention written with the oldest ids, then duplicates sent
/// (as in (b)) until the agent's pruner has deleted all of it, or for a bounded time.
void Runner::retentionRound()
{
    HistoryFigures &history = *m_report.history;
    history.agedDeliveries = std::max<qint64>(m_options.preloadDeliveries / kPreloadDays, 1);
    const double prunedBefore = prunedDeliveries();
    if (prunedBefore < 0) {
        m_report.problems << QStringLiteral(
            "the agent's /metrics has no payonce_retention_pruned_total for deliveries");
        return;
    }
    std::fprintf(stderr, "payonce-bench: a day of deliveries past retention (%lld rows) ...\n",
                 static_cast<long long>(history.agedDeliveries));
    const qint64 agedFrom = QDateTime::currentMSecsSinceEpoch() - (kDeliveriesRetentionDays + 1) * kDayMs;
    QElapsedTimer since;
    since.start();
    if (auto aged = preloadAgedDeliveries(m_env.databaseUrl(), history.agedDeliveries, agedFrom); !aged.ok()) {
        m_report.problems << QStringLiteral("writing the aged deliveries failed: ") + aged.error().internalMessage;
        return;
    }
    // The pruner may start on the aged rows while they are written: the clock starts there.
    const std::chrono::milliseconds cap = std::max<std::chrono::milliseconds>(std::chrono::seconds(120),
                                                                              m_options.duration * 4);
    const qint64 sentCount = m_sentUnique;
    measure(QStringLiteral("duplicate_callbacks_retention"),
            QStringLiteral("(b) duplicate callbacks while retention prunes a day"),
            QStringLiteral("duplicate_callbacks_preloaded"), [&] {
                IndexedWorkload cycling(sentCount, true, [this, sentCount](qint64 i) {
                    return notificationExchange(m_notifications[std::size_t(i % sentCount)],
                                                NotificationExpectation::Duplicate);
                });
                std::atomic<bool> stop{false};
                StoppableWorkload duplicates(cycling, stop);
                LoadOptions load = loadOptions(false);
                load.duration = cap;
                LoadResult result;
                std::thread sender([&] { result = runLoad(load, duplicates); });
                // Polled here, on the thread Qt knows, while the sender runs on its own.
                while (!stop) {
                    QThread::msleep(100);
                    history.prunedDeliveries = qint64(prunedDeliveries() - prunedBefore);
                    if (history.prunedDeliveries >= history.agedDeliveries) {
                        history.pruneSeconds = double(since.elapsed()) / 1000;
                        stop = true;
                    } else if (since.elapsed() > cap.count()) {
                        stop = true;
                    }
                }
                sender.join();
                return result;
            });
}

} // namespace

BenchReport runBenchmark(const BenchOptions &options)
{
    BenchReport report;
    report.dialect = testsupport::dialectName(options.dialect);
    report.keyStore = options.redisServer ? QStringLiteral("redis-server") : QStringLiteral("embedded");
    report.connections = options.connections;
    report.skus = options.skus;
    report.clientThreads = options.clientThreads;
    report.cores = coreCount();
    report.loadAverageBefore = loadAverage();
    BenchEnvironment::Options envOptions;
    envOptions.dialect = options.dialect;
    envOptions.redisServer = options.redisServer;
    envOptions.streamIntervalMs = options.slowStreamClient ? options.streamIntervalMs : 0;
    envOptions.agentArguments = options.agentArguments;
    // The history rounds watch the agent's own pruner delete an aged day of deliveries: it
    // runs every second instead of every 10 minutes, on the deliveries only (the other
    // tables' runs, 600 times as often as in production, would weigh on the rounds compared).
    if (options.preloads()) {
        envOptions.agentArguments = QStringList{QStringLiteral("--retention-interval-ms=1000"),
                                                QStringLiteral("--retention-callback-log-days=0"),
                                                QStringLiteral("--retention-outbox-delivered-days=0"),
                                                QStringLiteral("--retention-qa-runs-days=0")}
                                    + envOptions.agentArguments;
    }
    report.agentArguments = envOptions.agentArguments;
    QString error;
    std::unique_ptr<BenchEnvironment> env = BenchEnvironment::start(envOptions, &error);
    if (!env) {
        report.problems << QStringLiteral("the environment did not start: ") + error;
        return report;
    }
    Runner(options, *env, report).run();
    report.loadAverageAfter = loadAverage();
    return report;
}

} // namespace payonce::bench
