#include "lockroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/ports/keystore.h"
#include "core/ports/lockobserver.h"

#include <QJsonArray>
#include <QSet>

namespace payonce::http {

namespace {

QJsonObject toJson(const core::LockView &lock)
{
    return QJsonObject{
        {QStringLiteral("key"), lock.key},
        {QStringLiteral("owner"), lock.owner},
        {QStringLiteral("state"),
         lock.state == core::LockView::State::Held ? QStringLiteral("held") : QStringLiteral("lost")},
        {QStringLiteral("fencing_token"), QString::number(lock.fencingToken)},
        {QStringLiteral("fence_scope"), lock.fenceScope},
        {QStringLiteral("acquired_at"), isoTime(lock.acquiredAtMs)},
        {QStringLiteral("ttl_left_ms"), lock.ttlLeftMs},
        {QStringLiteral("renewals"), lock.renewals},
    };
}

QJsonObject toJson(const core::KeyStoreTopology &topology, bool degraded)
{
    return QJsonObject{
        {QStringLiteral("mode"), topology.mode},
        {QStringLiteral("master"), topology.master},
        {QStringLiteral("fence_epoch"), QString::number(topology.fenceEpoch)},
        {QStringLiteral("master_switches"), qint64(topology.masterSwitches)},
        {QStringLiteral("degraded"), degraded},
    };
}

QJsonArray toJsonArray(const QStringList &list)
{
    QJsonArray array;
    for (const QString &item : list)
        array.append(item);
    return array;
}

/// Why a stored lock will not go away by itself in time, or empty: a lock payonce takes
/// always expires within its ttl (the watchdog renews it to the ttl, never beyond).
QString stuckReason(const core::StoredLock &lock, qint64 longestLockTtlMs)
{
    if (lock.ttlLeftMs < 0)
        return QStringLiteral("no_expiry");
    if (lock.ttlLeftMs > longestLockTtlMs)
        return QStringLiteral("ttl_above_lock_ttl");
    return {};
}

HttpReply storedLocks(const HttpRequest &request, core::KeyStore &keyStore, qint64 longestLockTtlMs)
{
    const auto limit = limitParameter(request, 200, 1000);
    if (!limit)
        return errorReply(limit.error());
    QSet<QString> mine;
    for (const core::LockView &lock : keyStore.lockObserver().locks()) {
        if (lock.state == core::LockView::State::Held)
            mine.insert(lock.owner);
    }
    const core::StoredLockScan scan = keyStore.scanLocks(limit.value());
    QJsonArray locks;
    int stuck = 0;
    for (const core::StoredLock &lock : scan.locks) {
        const QString reason = stuckReason(lock, longestLockTtlMs);
        stuck += reason.isEmpty() ? 0 : 1;
        locks.append(QJsonObject{
            {QStringLiteral("key"), lock.key},
            {QStringLiteral("stored_key"), lock.storedKey},
            {QStringLiteral("node"), lock.node},
            {QStringLiteral("owner"), lock.owner},
            {QStringLiteral("ttl_left_ms"), lock.ttlLeftMs},
            {QStringLiteral("held_by_this_agent"), mine.contains(lock.owner)},
            {QStringLiteral("stuck"), !reason.isEmpty()},
            {QStringLiteral("stuck_reason"), reason.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(reason)},
        });
    }
    return HttpReply::ok(QJsonObject{{QStringLiteral("locks"), locks},
                                     {QStringLiteral("stuck"), stuck},
                                     {QStringLiteral("nodes"), toJsonArray(scan.nodes)},
                                     {QStringLiteral("failures"), toJsonArray(scan.failures)},
                                     {QStringLiteral("truncated"), scan.truncated},
                                     {QStringLiteral("lock_ttl_ms"), longestLockTtlMs}});
}

} // namespace

void registerLockRoutes(HttpServer &server, core::KeyStore &keyStore, qint64 longestLockTtlMs,
                        std::function<qint64()> staleFenceRefused)
{
    server.route(Method::Get, QStringLiteral("/api/v1/locks/keys"), Role::Viewer,
                 [&keyStore, longestLockTtlMs](const HttpRequest &request) {
                     return storedLocks(request, keyStore, longestLockTtlMs);
                 });
    server.route(Method::Get, QStringLiteral("/api/v1/locks"), Role::Viewer,
                 [&keyStore, staleFenceRefused = std::move(staleFenceRefused)](const HttpRequest &) {
                     const core::LockObserver &locks = keyStore.lockObserver();
                     const core::KeyStoreTopology topology = keyStore.topology();
                     QJsonArray lockList;
                     for (const core::LockView &lock : locks.locks())
                         lockList.append(toJson(lock));
                     QJsonArray fences;
                     for (const core::FenceView &fence : locks.lastFencingTokens())
                         fences.append(QJsonObject{{QStringLiteral("order_no"), fence.scope},
                                                   {QStringLiteral("token"), QString::number(fence.token)}});
                     return HttpReply::ok(
                         QJsonObject{{QStringLiteral("locks"), lockList},
                                     {QStringLiteral("fencing_tokens"), fences},
                                     {QStringLiteral("stale_fence_refused"), staleFenceRefused()},
                                     {QStringLiteral("key_store"), toJson(topology, keyStore.degraded())}});
                 });
}

} // namespace payonce::http
