#include "benchreport.h"

#include <QJsonArray>

#include <cmath>

namespace payonce::bench {

namespace {

/// The benchmark's targets: unique callbacks against the floor (the paid transaction by
/// hand): 60% with orders spread over many SKUs, 50% when every order shares one stock row,
/// with their p99; duplicates against bare HTTP, with their p99.
constexpr double kUniqueTargetSpread = 0.6;
constexpr double kUniqueTargetOneSku = 0.5;
constexpr double kUniqueP99TargetMs = 50.0;
constexpr double kDuplicateTarget = 0.25;
constexpr double kDuplicateP99TargetMs = 10.0;
/// Against a preloaded history: the rates within 15% of the empty database's, and the
/// callbacks that run while retention deletes a day no more than 50 ms slower in their p99.
constexpr double kHistoryRateTarget = 0.85;
constexpr double kRetentionPauseTargetMs = 50.0;

QString verdict(bool met)
{
    return met ? QStringLiteral("met") : QStringLiteral("NOT met");
}

QByteArray cell(double value, int decimals)
{
    return QByteArray::number(value, 'f', decimals);
}

} // namespace

double PhaseFigures::latencyMs(double quantile) const
{
    const auto &l = load.latenciesNs;
    if (l.empty())
        return 0;
    // Nearest rank: the smallest sample with at least `quantile` of them at or below it.
    const std::size_t rank = std::size_t(std::ceil(quantile * double(l.size())));
    return double(l[std::min(l.size() - 1, rank == 0 ? 0 : rank - 1)]) / 1e6;
}

const PhaseFigures *BenchReport::phase(const QString &key) const
{
    for (const PhaseFigures &figures : phases) {
        if (figures.key == key)
            return &figures;
    }
    return nullptr;
}

PhaseFigures *BenchReport::phase(const QString &key)
{
    for (PhaseFigures &figures : phases) {
        if (figures.key == key)
            return &figures;
    }
    return nullptr;
}

std::optional<double> BenchReport::ratioToLimit(const PhaseFigures &figures) const
{
    const PhaseFigures *limit = figures.limitKey.isEmpty() ? nullptr : phase(figures.limitKey);
    if (!limit || limit->rate() <= 0)
        return std::nullopt;
    return figures.rate() / limit->rate();
}

qint64 BenchReport::totalErrors() const
{
    qint64 errors = 0;
    for (const PhaseFigures &figures : phases)
        errors += figures.load.failed;
    return errors;
}

qint64 BenchReport::totalDropped() const
{
    qint64 dropped = 0;
    for (const PhaseFigures &figures : phases)
        dropped += figures.load.dropped();
    return dropped;
}

void BenchReport::print(std::FILE *out) const
{
    std::fprintf(out,
                 "payonce-bench: %s, key store %s, %d connections (%d client threads), %d SKUs, %d cores, "
                 "load average %.2f before, %.2f after\n\n",
                 qPrintable(dialect), qPrintable(keyStore), connections, clientThreads, skus, cores, loadAverageBefore,
                 loadAverageAfter);
    if (!agentArguments.isEmpty())
        std::fprintf(out, "agent arguments: %s\n\n", qPrintable(agentArguments.join(QLatin1Char(' '))));
    std::fprintf(out, "| phase | ops | seconds | ops/s | p50 ms | p99 ms | max ms | errors | requests | dropped | "
                      "bench CPU | agent CPU | db CPU ms/op | of limit |\n");
    std::fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const PhaseFigures &f : phases) {
        const std::optional<double> ratio = ratioToLimit(f);
        const QByteArray ratioCell = ratio ? cell(*ratio * 100, 1) + "% of " + f.limitKey.toUtf8()
                                           : QByteArray("limit");
        const QByteArray ratioShown = f.preparation ? QByteArray("-") : ratioCell;
        const QByteArray agentCell = f.agentCores < 0 ? QByteArray("-") : cell(f.agentCores * 100, 0) + "%";
        const QByteArray serverCell = f.serverCpuMsPerOp() < 0 ? QByteArray("-") : cell(f.serverCpuMsPerOp(), 3);
        const QByteArray requestsCell = f.load.overHttp ? QByteArray::number(f.load.requestsSent) : QByteArray("-");
        const QByteArray droppedCell = f.load.overHttp ? QByteArray::number(f.load.dropped()) : QByteArray("-");
        std::fprintf(out, "| %s | %lld | %s | %s | %s | %s | %s | %lld | %s | %s | %s%% | %s | %s | %s |\n",
                     qPrintable(f.title), static_cast<long long>(f.load.completed), cell(f.load.seconds, 3).constData(),
                     cell(f.rate(), 0).constData(), cell(f.latencyMs(0.5), 3).constData(),
                     cell(f.latencyMs(0.99), 3).constData(), cell(f.latencyMs(1.0), 3).constData(),
                     static_cast<long long>(f.load.failed), requestsCell.constData(), droppedCell.constData(),
                     cell(f.benchCpuShare * 100, 1).constData(), agentCell.constData(), serverCell.constData(),
                     ratioShown.constData());
    }
    std::fprintf(out, "\nrequests: HTTP requests sent; dropped: of those, the ones whose connection closed before "
                      "their answer came (every request the agent accepted must be answered).\n");
    std::fprintf(out,
                 "\nbench CPU: the benchmark's CPU time over wall time x %d cores; agent CPU: the agent's CPU "
                 "time over wall time (100%% = one core); db CPU: the database server's processes' CPU time over the "
                 "phase per operation (- for SQLite, inside the agent).\n",
                 cores);

    std::fprintf(out, "\nTargets (reported, never asserted):\n");
    if (const PhaseFigures *unique = phase(QStringLiteral("unique_callbacks")); unique && ratioToLimit(*unique)) {
        const double target = skus == 1 ? kUniqueTargetOneSku : kUniqueTargetSpread;
        std::fprintf(out, "- unique callbacks >= %.0f%% of the floor (%d SKUs): %.1f%% -> %s\n", target * 100, skus,
                     *ratioToLimit(*unique) * 100, qPrintable(verdict(*ratioToLimit(*unique) >= target)));
        std::fprintf(out, "- unique callbacks p99 <= %.0f ms: %.2f ms -> %s\n", kUniqueP99TargetMs,
                     unique->latencyMs(0.99), qPrintable(verdict(unique->latencyMs(0.99) <= kUniqueP99TargetMs)));
    }
    if (const PhaseFigures *dups = phase(QStringLiteral("duplicate_callbacks")); dups && ratioToLimit(*dups)) {
        std::fprintf(out, "- duplicates >= %.0f%% of bare HTTP: %.1f%% -> %s\n", kDuplicateTarget * 100,
                     *ratioToLimit(*dups) * 100, qPrintable(verdict(*ratioToLimit(*dups) >= kDuplicateTarget)));
        std::fprintf(out, "- duplicates p99 <= %.0f ms at %d connections: %.2f ms -> %s\n", kDuplicateP99TargetMs,
                     connections, dups->latencyMs(0.99),
                     qPrintable(verdict(dups->latencyMs(0.99) <= kDuplicateP99TargetMs)));
    }

    if (history) {
        const HistoryFigures &h = *history;
        std::fprintf(out,
                     "- history: %lld deliveries and %lld paid orders over %d days, preloaded in %.0f s (then "
                     "%lld delivery rows and %lld PAID orders in the tables)\n",
                     static_cast<long long>(h.deliveries), static_cast<long long>(h.paidOrders), h.days,
                     h.preloadSeconds, static_cast<long long>(h.deliveryRows), static_cast<long long>(h.paidOrderRows));
        for (const char *key : {"unique_callbacks_preloaded", "duplicate_callbacks_preloaded"}) {
            const PhaseFigures *f = phase(QString::fromLatin1(key));
            if (!f || !ratioToLimit(*f))
                continue;
            std::fprintf(out, "- %s with the history, within %.0f%% of the empty database's rate: %.1f%% -> %s\n",
                         f->key.startsWith(u"unique") ? "unique callbacks" : "duplicates",
                         (1 - kHistoryRateTarget) * 100, *ratioToLimit(*f) * 100,
                         qPrintable(verdict(*ratioToLimit(*f) >= kHistoryRateTarget)));
        }
        const PhaseFigures *during = phase(QStringLiteral("duplicate_callbacks_retention"));
        const PhaseFigures *without = phase(QStringLiteral("duplicate_callbacks_preloaded"));
        if (during && without) {
            const double pause = during->latencyMs(0.99) - without->latencyMs(0.99);
            std::fprintf(out,
                         "- retention: %lld of %lld deliveries past retention pruned %s while duplicates ran; their "
                         "p99 %.2f ms against %.2f ms without (%+.2f ms, max %.2f ms) -> %s (target: no pause above "
                         "%.0f ms in the p99, the whole day pruned)\n",
                         static_cast<long long>(h.prunedDeliveries), static_cast<long long>(h.agedDeliveries),
                         h.pruneSeconds < 0 ? "(not all: the phase ran out of time)"
                                            : qPrintable(QStringLiteral("in %1 s").arg(h.pruneSeconds, 0, 'f', 1)),
                         during->latencyMs(0.99), without->latencyMs(0.99), pause, during->latencyMs(1.0),
                         qPrintable(verdict(pause <= kRetentionPauseTargetMs && h.pruneSeconds >= 0)),
                         kRetentionPauseTargetMs);
        }
    }

    if (slowStream) {
        const SlowStreamFigures &s = *slowStream;
        std::fprintf(out,
                     "\nSlow stream client: unique callbacks without / with a client on /api/v1/stream "
                     "that never reads (stream.interval_ms %d, %.1f s with the client, ~%.0f ticks):\n",
                     s.intervalMs, s.secondsWithClient,
                     s.intervalMs > 0 ? s.secondsWithClient * 1000 / s.intervalMs : 0);
        std::fprintf(out, "- without: %.0f/s, with: %.0f/s, ratio %.3f\n", s.rateWithout, s.rateWith,
                     s.rateWithout > 0 ? s.rateWith / s.rateWithout : 0);
        std::fprintf(out, "- agent RSS before %lld KiB, after %lld KiB (%+lld KiB)\n",
                     static_cast<long long>(s.rssBeforeKiB), static_cast<long long>(s.rssAfterKiB),
                     static_cast<long long>(s.rssAfterKiB - s.rssBeforeKiB));
        std::fprintf(out, "- payonce_stream_coalesced_total %.0f, payonce_stream_dropped_total %.0f\n", s.coalesced,
                     s.dropped);
    }

    for (const PhaseFigures &f : phases) {
        for (const QString &failure : f.load.failureSamples)
            std::fprintf(out, "\nERROR in %s: %s", qPrintable(f.key), qPrintable(failure));
    }
    for (const QString &problem : problems)
        std::fprintf(out, "\nERROR: %s", qPrintable(problem));
    std::fprintf(out, "\n%s: %lld errors, %lld dropped\n", succeeded() ? "OK" : "FAILED",
                 static_cast<long long>(totalErrors()), static_cast<long long>(totalDropped()));
}

QJsonObject BenchReport::toJson() const
{
    QJsonArray phaseArray;
    for (const PhaseFigures &f : phases) {
        QJsonObject o{{QStringLiteral("phase"), f.key},
                      {QStringLiteral("ops"), f.load.completed},
                      {QStringLiteral("seconds"), f.load.seconds},
                      {QStringLiteral("ops_per_second"), f.rate()},
                      {QStringLiteral("p50_ms"), f.latencyMs(0.5)},
                      {QStringLiteral("p99_ms"), f.latencyMs(0.99)},
                      {QStringLiteral("max_ms"), f.latencyMs(1.0)},
                      {QStringLiteral("errors"), f.load.failed},
                      {QStringLiteral("preparation"), f.preparation},
                      {QStringLiteral("bench_cpu_share"), f.benchCpuShare},
                      {QStringLiteral("agent_cpu_cores"), f.agentCores},
                      {QStringLiteral("db_cpu_ms_per_op"), f.serverCpuMsPerOp()}};
        if (f.load.overHttp) {
            o.insert(QStringLiteral("requests"), f.load.requestsSent);
            o.insert(QStringLiteral("answers"), f.load.answersReceived);
            o.insert(QStringLiteral("dropped"), f.load.dropped());
        }
        if (const std::optional<double> ratio = ratioToLimit(f)) {
            o.insert(QStringLiteral("limit"), f.limitKey);
            o.insert(QStringLiteral("ratio_to_limit"), *ratio);
        }
        phaseArray.append(o);
    }
    QJsonObject root{{QStringLiteral("dialect"), dialect},
                     {QStringLiteral("key_store"), keyStore},
                     {QStringLiteral("connections"), connections},
                     {QStringLiteral("skus"), skus},
                     {QStringLiteral("cores"), cores},
                     {QStringLiteral("load_average_before"), loadAverageBefore},
                     {QStringLiteral("load_average_after"), loadAverageAfter},
                     {QStringLiteral("phases"), phaseArray},
                     {QStringLiteral("errors"), totalErrors()},
                     {QStringLiteral("dropped"), totalDropped()},
                     {QStringLiteral("problems"), QJsonArray::fromStringList(problems)}};
    if (slowStream) {
        root.insert(QStringLiteral("slow_stream"),
                    QJsonObject{{QStringLiteral("rate_without"), slowStream->rateWithout},
                                {QStringLiteral("rate_with"), slowStream->rateWith},
                                {QStringLiteral("rss_before_kib"), slowStream->rssBeforeKiB},
                                {QStringLiteral("rss_after_kib"), slowStream->rssAfterKiB},
                                {QStringLiteral("coalesced_total"), slowStream->coalesced},
                                {QStringLiteral("dropped_total"), slowStream->dropped},
                                {QStringLiteral("interval_ms"), slowStream->intervalMs}});
    }
    if (history) {
        root.insert(QStringLiteral("history"),
                    QJsonObject{{QStringLiteral("deliveries"), history->deliveries},
                                {QStringLiteral("paid_orders"), history->paidOrders},
                                {QStringLiteral("days"), history->days},
                                {QStringLiteral("preload_seconds"), history->preloadSeconds},
                                {QStringLiteral("delivery_rows"), history->deliveryRows},
                                {QStringLiteral("paid_order_rows"), history->paidOrderRows},
                                {QStringLiteral("aged_deliveries"), history->agedDeliveries},
                                {QStringLiteral("pruned_deliveries"), history->prunedDeliveries},
                                {QStringLiteral("prune_seconds"), history->pruneSeconds}});
    }
    return root;
}

} // namespace payonce::bench
