#pragma once

#include "support/serverharness.h"

#include <QString>
#include <QStringList>

#include <chrono>
#include <optional>

namespace payonce::bench {

/// payonce-bench's command line (--help lists it).
struct BenchOptions {
    testsupport::Dialect dialect = testsupport::Dialect::Sqlite;
    int connections = 64;
    int clientThreads = 2;
    /// Each timed phase runs this long …
    std::chrono::milliseconds duration{std::chrono::seconds(20)};
    /// … or, when set, exactly this many operations (then duration is unused).
    std::optional<qint64> requests;
    bool redisServer = false;
    /// Orders spread over this many SKUs (1: a flash sale, every order on one stock row).
    int skus = 1000;
    bool slowStreamClient = false;
    int streamIntervalMs = 5;
    /// --agent-arg: passed to payonce-agent as they are (a setting tried against its default).
    QStringList agentArguments;
    QString jsonPath;
    /// --perf DIR: the agent profiled (perf record -g) during (a) and (b); empty: not asked.
    QString perfDir;
    /// --memory-storm S: instead of the phases, a callback storm of S seconds with the
    /// agent's RSS sampled (scripts/bench-memory.sh). Zero: not asked.
    std::chrono::seconds memoryStorm{0};
    /// --preload-deliveries N / --preload-orders M: after the usual phases, a history of N
    /// delivery rows and M paid orders written into the database, (a) and (b) again against
    /// it, then a day of deliveries past retention pruned while duplicates run. Zero: not asked.
    qint64 preloadDeliveries = 0;
    qint64 preloadOrders = 0;

    bool preloads() const { return preloadDeliveries > 0 || preloadOrders > 0; }

    /// Operations a count-bound phase runs, or -1 for a time-bound one.
    qint64 fixedCount() const { return requests ? *requests : -1; }
};

/// Parses the arguments; on a bad one prints why and exits 2 (--help exits 0).
BenchOptions parseBenchOptions(const QStringList &arguments);

} // namespace payonce::bench
