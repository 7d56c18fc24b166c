#include "lockroutes.h"

#include "routesupport.h"

#include "core/ports/keystore.h"
#include "core/ports/lockobserver.h"

#include <QJsonArray>

namespace payonce::http {

namespace {

QJsonObject toJson(const core::LockView &lock)
{
    return QJsonObject{
        {QStringLiteral("key"), lock.key},
        {QStringLiteral("owner"), lock.owner},
        {QStringLiteral("state"), lock.state == core::LockView::State::Held ? QStringLiteral("held") : QStringLiteral("lost")},
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

} // namespace

void registerLockRoutes(HttpServer &server, const core::KeyStore &keyStore, std::function<qint64()> staleFenceRefused)
{
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
                     return HttpReply::ok(QJsonObject{{QStringLiteral("locks"), lockList},
                                                      {QStringLiteral("fencing_tokens"), fences},
                                                      {QStringLiteral("stale_fence_refused"), staleFenceRefused()},
                                                      {QStringLiteral("key_store"), toJson(topology, keyStore.degraded())}});
                 });
}

} // namespace payonce::http
