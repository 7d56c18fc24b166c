#pragma once

#include "loadclient.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <cstdio>
#include <optional>

namespace payonce::bench {

/// One measured phase: what ran, what it did, and what it cost in CPU.
struct PhaseFigures {
    QString key;   ///< machine name: "unique_callbacks", "direct_sql", …
    QString title; ///< what the table prints
    LoadResult load;
    double benchCpuShare = 0;     ///< the benchmark's CPU over wall × cores
    double agentCores = -1;       ///< the agent's CPU over wall (cores); -1 unknown
    QString limitKey;             ///< the phase this one is a ratio of, empty for limits themselves
    bool preparation = false;     ///< set-up load (creating orders): shown, never a ratio or a limit
    double serverCpuSeconds = -1; ///< the database server's CPU over the phase; -1 unknown or embedded (SQLite)

    /// The database server's CPU milliseconds per operation; -1 unknown.
    double serverCpuMsPerOp() const
    {
        return serverCpuSeconds < 0 || load.completed <= 0 ? -1 : serverCpuSeconds * 1000 / double(load.completed);
    }
    double rate() const { return load.seconds > 0 ? double(load.completed) / load.seconds : 0; }
    /// Latency quantile (0..1) in milliseconds; 0 without samples.
    double latencyMs(double quantile) const;
};

/// The slow-stream comparison: unique callbacks without and with a stream client that never reads.
struct SlowStreamFigures {
    double rateWithout = 0;
    double rateWith = 0;
    qint64 rssBeforeKiB = -1;
    qint64 rssAfterKiB = -1;
    double coalesced = -1; ///< payonce_stream_coalesced_total after the phase
    double dropped = -1;   ///< payonce_stream_dropped_total after the phase
    int intervalMs = 0;
    double secondsWithClient = 0;
};

/// The history rounds (--preload-deliveries): what was preloaded, and the aged day retention pruned.
struct HistoryFigures {
    qint64 deliveries = 0;
    qint64 paidOrders = 0;
    int days = 0;
    double preloadSeconds = 0;
    qint64 deliveryRows = 0;     ///< callback_deliveries rows once preloaded (the first round's included)
    qint64 paidOrderRows = 0;    ///< PAID orders once preloaded
    qint64 agedDeliveries = 0;   ///< the day past retention written before the last phase
    qint64 prunedDeliveries = 0; ///< of them, deleted by the agent's pruner while it ran
    double pruneSeconds = -1;    ///< from writing the aged day to all of it pruned; -1: not all
};

/// Everything a run printed, in the order it ran.
struct BenchReport {
    QString dialect;
    QString keyStore;
    int connections = 0;
    int skus = 0;               ///< the orders' SKUs (1: every order on one stock row)
    QStringList agentArguments; ///< --agent-arg, printed with the figures they produced
    int clientThreads = 0;
    int cores = 0;
    double loadAverageBefore = -1;
    double loadAverageAfter = -1;
    QList<PhaseFigures> phases;
    std::optional<SlowStreamFigures> slowStream;
    std::optional<HistoryFigures> history;
    QStringList problems; ///< anything that makes the exit code non-zero, besides phase errors

    const PhaseFigures *phase(const QString &key) const;
    PhaseFigures *phase(const QString &key);
    /// The agent figure over its limit's rate, or nullopt when either is missing.
    std::optional<double> ratioToLimit(const PhaseFigures &figures) const;
    qint64 totalErrors() const;
    qint64 totalDropped() const;
    bool succeeded() const { return totalErrors() == 0 && totalDropped() == 0 && problems.isEmpty(); }

    /// The table, the benchmark's targets (met / not met) and the slow-stream comparison.
    void print(std::FILE *out) const;
    QJsonObject toJson() const;
};

} // namespace payonce::bench
