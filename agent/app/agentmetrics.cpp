#include "agentmetrics.h"

#include "core/callback/callbackpipeline.h"
#include "core/confirm/confirmpipeline.h"
#include "core/gateways/breakerregistry.h"
#include "core/metrics/metricsregistry.h"
#include "core/ports/keystore.h"
#include "core/ports/notificationverifier.h"
#include "core/retention/retentionpruner.h"
#include "operationalcountscache.h"

namespace payonce::app {

using core::MetricSample;
using core::MetricType;

namespace {

double breakerStateValue(core::BreakerState state)
{
    switch (state) {
    case core::BreakerState::Closed: return 0;
    case core::BreakerState::HalfOpen: return 1;
    case core::BreakerState::Open: return 2;
    }
    return 0;
}

QList<MetricSample> byLabel(const QString &label, const QList<QPair<QString, qint64>> &counts)
{
    QList<MetricSample> samples;
    for (const auto &[value, count] : counts)
        samples.append({{{label, value}}, double(count)});
    return samples;
}

/// What the duplicate-defence layers decided, and the writes fencing refused.
void registerLayerMetrics(core::MetricsRegistry &registry, const MetricsSources &sources)
{
    registry.addReader(QStringLiteral("payonce_duplicates_total"),
                       QStringLiteral("Confirms and callbacks decided by each duplicate-defence layer (none: processed "
                                      "for the first time; side_effect: an effect's own key refused a repeat)"),
                       MetricType::Counter, [confirm = sources.confirm, callbacks = sources.callbacks] {
                           QList<MetricSample> samples;
                           for (Layer layer : allLayers) {
                               const qint64 n = (confirm ? confirm->decidedBy(layer) : 0)
                                                + (callbacks ? callbacks->decidedBy(layer) : 0);
                               samples.append({{{QStringLiteral("layer"), layerName(layer)}}, double(n)});
                           }
                           return samples;
                       });
    registry.addReader(QStringLiteral("payonce_stale_fence_refused_total"),
                       QStringLiteral("Writes refused because their fencing token was older than the order's"),
                       MetricType::Counter, [callbacks = sources.callbacks] {
                           return QList<MetricSample>{{{}, double(callbacks ? callbacks->staleFenceRefused() : 0)}};
                       });
    registry.addReader(QStringLiteral("payonce_callback_unfenced_settlements_total"),
                       QStringLiteral("Orders paid without the pay lock or a fencing token while Redis was unreachable "
                                      "(the database's status CAS decided alone)"),
                       MetricType::Counter, [callbacks = sources.callbacks] {
                           return QList<MetricSample>{{{}, double(callbacks ? callbacks->unfencedSettlements() : 0)}};
                       });
}

/// The callback path's own work: group-committed delivery rows, copies not verified again, the
/// commit path taken, and what retention pruned.
void registerCallbackPathMetrics(core::MetricsRegistry &registry, const MetricsSources &sources)
{
    registry.addReader(
        QStringLiteral("payonce_callback_grouped_delivery_rows_total"),
        QStringLiteral("Delivery rows decided before they were written (seen duplicates, rejections), "
                       "written by group commit"),
        MetricType::Counter, [callbacks = sources.callbacks] {
            return QList<MetricSample>{{{}, double(callbacks ? callbacks->decidedDeliveries().rowsWritten() : 0)}};
        });
    registry.addReader(
        QStringLiteral("payonce_callback_grouped_delivery_commits_total"),
        QStringLiteral("Transactions that wrote those rows (rows / commits: what the grouping saved)"),
        MetricType::Counter, [callbacks = sources.callbacks] {
            return QList<MetricSample>{{{}, double(callbacks ? callbacks->decidedDeliveries().batchesWritten() : 0)}};
        });
    registry.addReader(QStringLiteral("payonce_callback_grouped_delivery_refused_total"),
                       QStringLiteral("Deliveries answered FAIL at once because the group commit's queue was full "
                                      "(its rows waiting on a slow database); the platform sends them again"),
                       MetricType::Counter, [callbacks = sources.callbacks] {
                           return QList<MetricSample>{
                               {{}, double(callbacks ? callbacks->decidedDeliveries().queueFullRefusals() : 0)}};
                       });
    registry.addReader(QStringLiteral("payonce_callback_verified_copies_reused_total"),
                       QStringLiteral("Payment notifications byte-identical to one verified in the last 10 minutes: "
                                      "their time window checked, their signature and resource not checked again"),
                       MetricType::Counter, [verifier = sources.verifier, callbacks = sources.callbacks] {
                           // The event loop's answers from memory are such copies too; the
                           // verifier counts only the ones verify() was asked for.
                           const double onLanes = verifier ? double(verifier->copiesReused()) : 0;
                           const double fromMemory = callbacks ? double(callbacks->answeredFromMemory()) : 0;
                           return QList<MetricSample>{{{}, onLanes + fromMemory}};
                       });
    registry.addReader(QStringLiteral("payonce_callback_answered_from_memory_total"),
                       QStringLiteral("Copies answered on the HTTP event loop from memory alone (bytes verified "
                                      "before, pay_no seen processed), without a callback thread"),
                       MetricType::Counter, [callbacks = sources.callbacks] {
                           return QList<MetricSample>{{{}, double(callbacks ? callbacks->answeredFromMemory() : 0)}};
                       });
    registry.addReader(QStringLiteral("payonce_callback_one_commit_total"),
                       QStringLiteral("New verified notifications by commit path: settled in one commit (committed), "
                                      "or rolled back and handed to the accepted-first path (fell_back)"),
                       MetricType::Counter, [callbacks = sources.callbacks] {
                           const double committed = callbacks ? double(callbacks->oneCommitSettled()) : 0;
                           const double fellBack = callbacks ? double(callbacks->oneCommitFellBack()) : 0;
                           return QList<MetricSample>{
                               {{{QStringLiteral("result"), QStringLiteral("committed")}}, committed},
                               {{{QStringLiteral("result"), QStringLiteral("fell_back")}}, fellBack}};
                       });
    registry.addReader(
        QStringLiteral("payonce_retention_pruned_total"),
        QStringLiteral("Rows deleted by retention, by table (deliveries, callback_log, outbox_delivered, "
                       "qa_runs)"),
        MetricType::Counter, [retention = sources.retention] {
            QList<MetricSample> samples;
            for (core::RetainedTable table : core::allRetainedTables)
                samples.append({{{QStringLiteral("table"), core::retainedTableName(table)}},
                                double(retention ? retention->deleted(table) : 0)});
            return samples;
        });
}

/// The circuit breakers and the desk's forcing of them.
void registerBreakerMetrics(core::MetricsRegistry &registry, const MetricsSources &sources)
{
    registry.addReader(QStringLiteral("payonce_breaker_state"),
                       QStringLiteral("Circuit breaker state: 0 closed, 1 half-open, 2 open"), MetricType::Gauge,
                       [breakers = sources.breakers] {
                           QList<MetricSample> samples;
                           if (breakers) {
                               for (const core::BreakerSnapshot &b : breakers->snapshots())
                                   samples.append({{{QStringLiteral("name"), b.name}}, breakerStateValue(b.state)});
                           }
                           return samples;
                       });
    registry.addReader(
        QStringLiteral("payonce_breaker_forced"),
        QStringLiteral("1 while an operator forces the breaker (mode forced_open or forced_closed)"), MetricType::Gauge,
        [breakers = sources.breakers] {
            QList<MetricSample> samples;
            if (breakers) {
                for (const core::BreakerSnapshot &b : breakers->snapshots()) {
                    for (core::BreakerMode mode : {core::BreakerMode::ForcedOpen, core::BreakerMode::ForcedClosed})
                        samples.append(
                            {{{QStringLiteral("name"), b.name}, {QStringLiteral("mode"), core::breakerModeName(mode)}},
                             b.effectiveMode == mode ? 1.0 : 0.0});
                }
            }
            return samples;
        });
}

/// The key store (Redis): reachable or not, its topology, the fencing epoch and failovers.
void registerKeyStoreMetrics(core::MetricsRegistry &registry, const MetricsSources &sources)
{
    registry.addReader(
        QStringLiteral("payonce_redis_degraded"),
        QStringLiteral("1 while the key store (Redis) is unreachable and the durable layers decide alone"),
        MetricType::Gauge, [keyStore = sources.keyStore] {
            return QList<MetricSample>{{{}, keyStore && keyStore->degraded() ? 1.0 : 0.0}};
        });
    // The war room sees a failover here: the master changes, the switch counter moves and
    // the fence epoch in force grows.
    registry.addReader(
        QStringLiteral("payonce_redis_topology"),
        QStringLiteral("1, labelled with how the key store reaches its data: mode (embedded, single, "
                       "sentinel, cluster) and the master written to now (a cluster: its masters)"),
        MetricType::Gauge, [keyStore = sources.keyStore] {
            if (!keyStore)
                return QList<MetricSample>{};
            const core::KeyStoreTopology t = keyStore->topology();
            return QList<MetricSample>{{{{QStringLiteral("mode"), t.mode}, {QStringLiteral("master"), t.master}}, 1.0}};
        });
    registry.addReader(
        QStringLiteral("payonce_redis_fence_epoch"),
        QStringLiteral(
            "The fencing epoch in force on the key store's master, on a cluster the largest of the slots met "
            "(tokens are epoch << 32 | counter)"),
        MetricType::Gauge, [keyStore = sources.keyStore] {
            return QList<MetricSample>{{{}, keyStore ? double(keyStore->topology().fenceEpoch) : 0.0}};
        });
    registry.addReader(
        QStringLiteral("payonce_redis_master_switches_total"),
        QStringLiteral("Times the key store's master changed since start (Sentinel failovers and failbacks, changes "
                       "of a cluster's masters)"),
        MetricType::Counter, [keyStore = sources.keyStore] {
            return QList<MetricSample>{{{}, keyStore ? double(keyStore->topology().masterSwitches) : 0.0}};
        });
}

/// COUNT(*)s of the database, read at most once per scrape.
void registerDurableCountMetrics(core::MetricsRegistry &registry, OperationalCountsCache *counts)
{
    // One database read per scrape shared by the seven families that show it: the first
    // family's reader reads, the others take the same result (a scrape renders families in
    // order, and the next scrape reads afresh).
    registry.addReader(QStringLiteral("payonce_outbox_pending"), QStringLiteral("Outbox events waiting for delivery"),
                       MetricType::Gauge, [counts] {
                           const auto c = counts->readNow();
                           return c ? QList<MetricSample>{{{}, double(c->outboxPending)}} : QList<MetricSample>{};
                       });
    registry.addReader(QStringLiteral("payonce_outbox_dead_total"),
                       QStringLiteral("Outbox events given up after the maximum attempts (a redrive lowers it)"),
                       MetricType::Counter, [counts] {
                           const auto c = counts->last();
                           return c ? QList<MetricSample>{{{}, double(c->outboxDead)}} : QList<MetricSample>{};
                       });
    registry.addReader(
        QStringLiteral("payonce_outbox_oldest_pending_seconds"),
        QStringLiteral("How long the oldest outbox event waiting for delivery has waited (0: none)"), MetricType::Gauge,
        [counts] {
            const auto c = counts->last();
            return c ? QList<MetricSample>{{{}, double(c->outboxOldestPendingAgeMs) / 1000.0}} : QList<MetricSample>{};
        });
    registry.addReader(QStringLiteral("payonce_callbacks_accepted"),
                       QStringLiteral("Callbacks acknowledged behind a durable log row and not yet settled "
                                      "(accept-only mode's backlog; the worker drains it)"),
                       MetricType::Gauge, [counts] {
                           const auto c = counts->last();
                           return c ? QList<MetricSample>{{{}, double(c->callbacksAccepted)}} : QList<MetricSample>{};
                       });
    registry.addReader(QStringLiteral("payonce_callbacks_accepted_oldest_seconds"),
                       QStringLiteral("How long the oldest accepted, unsettled callback has waited (0: none)"),
                       MetricType::Gauge, [counts] {
                           const auto c = counts->last();
                           return c ? QList<MetricSample>{{{}, double(c->callbacksOldestAcceptedAgeMs) / 1000.0}}
                                    : QList<MetricSample>{};
                       });
    registry.addReader(QStringLiteral("payonce_compensations"), QStringLiteral("Compensations by status"),
                       MetricType::Gauge, [counts] {
                           const auto c = counts->last();
                           return c ? byLabel(QStringLiteral("status"), c->compensationsByStatus)
                                    : QList<MetricSample>{};
                       });
    registry.addReader(QStringLiteral("payonce_findings_open"), QStringLiteral("Open reconciliation findings by kind"),
                       MetricType::Gauge, [counts] {
                           const auto c = counts->last();
                           return c ? byLabel(QStringLiteral("kind"), c->openFindingsByKind) : QList<MetricSample>{};
                       });
}

} // namespace

void registerAgentMetrics(core::MetricsRegistry &registry, const MetricsSources &sources)
{
    registerLayerMetrics(registry, sources);
    registerCallbackPathMetrics(registry, sources);
    registerBreakerMetrics(registry, sources);
    registerKeyStoreMetrics(registry, sources);
    if (sources.counts)
        registerDurableCountMetrics(registry, sources.counts);
}

} // namespace payonce::app
