#pragma once

#include "agentcluster.h"
#include "callbackstorm.h"
#include "storagefixture.h"

#include <QString>
#include <QTest>

#include <functional>
#include <future>

namespace payonce::testsupport {

/// What the Redis failover storms (tst_redisfailover on Sentinel, tst_redisfailover_cluster
/// on Redis Cluster) share: waiting while the notification relay's event loop runs, and
/// the fence history the database keeps of every order.

/// Polls `done` (the event loop running in between) until it holds or the time is up.
bool pollUntil(const std::function<bool()> &done, int timeoutMs);

/// Runs `step` (a blocking call of the Redis harness, seconds long) on a thread of its own
/// while this thread's event loop runs (the notification relay lives on it).
template <typename Step>
auto whileProcessingEvents(Step step)
{
    auto result = std::async(std::launch::async, std::move(step));
    while (result.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready)
        QTest::qWait(10);
    return result.get();
}

/// Three agents on PostgreSQL sharing `redis`, with test_fence_history recording (below);
/// logs how long the start took. Null and *error set on failure.
std::unique_ptr<AgentCluster> startStormCluster(AgentCluster::Redis redis, int agents, QString *error);

/// Waits (up to 3 minutes) until `share` of the storm's first-round POSTs were answered.
bool waitForProgress(const CallbackStorm &storm, double share);

/// Every change of an order's fence as the database saw it, in commit order per row: a
/// PostgreSQL trigger writes test_fence_history. Empty on success, else what failed.
QString recordFenceHistory(sql::Database &database);

/// What test_fence_history holds for the orders `<prefix>…`.
struct FenceHistory {
    qint64 changes = 0;
    QString backwards; ///< "order old -> new; …" for every change that went down; empty: none
};
FenceHistory readFenceHistory(sql::Database &database, const QString &prefix);

/// SELECT COUNT(*) (or another single number) on the storm's database; with a prefix, its
/// one ? is bound to `<prefix>%`.
qint64 countWithPrefix(sql::Database &database, const char *sql, const QString &prefix = {});

/// After a storm over the orders `<prefix>…` that took `deliveries` POSTs in all: within
/// settleMs every order is PAID once with one of each effect and nothing is lost
/// (PaidOnceReport, logged), every POST is a recorded delivery, and 10 of the stock are
/// left; then no order's fence went down (test_fence_history), there are at least `orders`
/// fence changes, and every fenced effect carries its order's token. *history: the fence
/// history read. A failure fails the calling test: check QTest::currentTestFailed() after.
void verifyStormOutcome(AgentCluster &cluster, const QString &prefix, int orders, qint64 deliveries, int settleMs,
                        FenceHistory *history);

/// Rows of stock_log, user_coupon and point_log of the orders `<prefix>…` whose fence is
/// neither 0 (written without a lock) nor their order's: an effect written with a token
/// other than the one the order's last write carried. "table: n" for each that has any.
QString effectsWithAnotherToken(sql::Database &database, const QString &prefix);

} // namespace payonce::testsupport
