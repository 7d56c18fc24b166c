#include "idempotencyroutes.h"

#include "errormapping.h"
#include "routesupport.h"

#include "core/confirm/idempotencykey.h"
#include "core/confirm/paymentoutcome.h"
#include "core/ports/auditwriter.h"
#include "core/ports/clock.h"
#include "core/ports/idempotencystore.h"

namespace payonce::http {

namespace {

struct RecordKey {
    qint64 userId = 0;
    QString key;
};

core::Result<RecordKey> recordKey(const QString &userText, const QString &key)
{
    bool ok = false;
    const qint64 userId = userText.toLongLong(&ok);
    if (!ok || userId < 1)
        return core::Error::make(core::ErrorCode::InvalidInput,
                                 QStringLiteral("user_id must be a positive whole number"));
    if (core::checkIdempotencyKey(key) != core::IdempotencyKeyCheck::Valid)
        return core::Error::make(core::ErrorCode::InvalidInput,
                                 QStringLiteral("key must be 1-255 printable ASCII characters"));
    return RecordKey{userId, key};
}

QJsonObject toJson(const core::IdempotencyRecord &r)
{
    QJsonValue response = QJsonValue::Null;
    if (r.response) {
        const auto code = core::paymentOutcomeFromName(r.response->outcome);
        response = QJsonObject{{QStringLiteral("outcome"), r.response->outcome},
                               {QStringLiteral("status"), code ? httpStatus(*code) : 0},
                               {QStringLiteral("body"), storedJson(QString::fromUtf8(r.response->body))}};
    }
    return QJsonObject{
        {QStringLiteral("user_id"), r.userId},
        {QStringLiteral("key"), r.key},
        {QStringLiteral("fingerprint"), QString::fromLatin1(r.fingerprint)},
        {QStringLiteral("status"),
         r.status == core::IdempotencyStatus::Completed ? QStringLiteral("completed") : QStringLiteral("in_flight")},
        {QStringLiteral("response"), response},
        {QStringLiteral("locked_at"), isoTime(r.lockedAtMs)},
        {QStringLiteral("created_at"), isoTime(r.createdAtMs)},
        {QStringLiteral("completed_at"),
         r.completedAtMs ? QJsonValue(isoTime(*r.completedAtMs)) : QJsonValue(QJsonValue::Null)},
    };
}

core::Result<core::IdempotencyRecord> findRecord(core::IdempotencyStore &store, const RecordKey &k)
{
    auto found = store.find(k.userId, k.key);
    if (!found)
        return found.error();
    if (!found.value())
        return core::Error::make(core::ErrorCode::NotFound,
                                 QStringLiteral("no idempotency record for user %1 and that key").arg(k.userId));
    return *found.value();
}

HttpReply inspect(const HttpRequest &request, core::IdempotencyStore &store)
{
    const auto k = recordKey(request.queryItem(QStringLiteral("user_id")), request.queryItem(QStringLiteral("key")));
    if (!k)
        return errorReply(k.error());
    auto record = findRecord(store, k.value());
    return record ? HttpReply::ok(toJson(record.value())) : errorReply(record.error());
}

HttpReply unlock(const HttpRequest &request, core::IdempotencyStore &store, core::AuditWriter &audit,
                 const core::Clock &clock, qint64 timeoutMs)
{
    const auto k = recordKey(request.pathArgument(QStringLiteral("user_id")),
                             request.pathArgument(QStringLiteral("key")));
    if (!k)
        return errorReply(k.error());
    const auto body = parseActionBody(request.body);
    if (!body)
        return errorReply(body.error());
    auto record = findRecord(store, k.value());
    if (!record)
        return errorReply(record.error());
    if (record->status == core::IdempotencyStatus::Completed)
        return errorReply(QStringLiteral("conflict"), QStringLiteral("the record is completed: nothing to unlock"));
    const qint64 cutoff = clock.nowMs() - timeoutMs;
    // The store's compare-and-delete on locked_at decides; the read above only words the
    // refusal. The audit row is written in the delete's transaction: both or neither.
    const QJsonObject before = toJson(record.value());
    auto unlocked = store.unlockStuck(k->userId, k->key, cutoff, [&]() -> core::Result<void> {
        auto audited = audit.append({actorOf(request), QStringLiteral("idempotency.unlock"),
                                     QStringLiteral("idempotency:%1:%2").arg(k->userId).arg(k->key),
                                     compactJson(before), QString(), body->reason, request.traceId});
        if (!audited)
            return audited.error();
        return {};
    });
    if (!unlocked)
        return errorReply(unlocked.error());
    if (!unlocked.value())
        return errorReply(
            QStringLiteral("conflict"),
            QStringLiteral("the record is not in_flight past its lock timeout of %1 s").arg(timeoutMs / 1000));
    return HttpReply::ok(QJsonObject{{QStringLiteral("unlocked"), true}, {QStringLiteral("record"), before}});
}

} // namespace

void registerIdempotencyRoutes(HttpServer &server, core::IdempotencyStore &store, core::AuditWriter &audit,
                               const core::Clock &clock, qint64 inFlightTimeoutMs)
{
    server.route(Method::Get, QStringLiteral("/api/v1/idempotency-keys"), Role::Viewer,
                 [&](const HttpRequest &request) { return inspect(request, store); });
    server.route(Method::Post, QStringLiteral("/api/v1/idempotency-keys/<user_id>/<key>/unlock"), Role::Operator,
                 [&store, &audit, &clock, inFlightTimeoutMs](const HttpRequest &request) {
                     return unlock(request, store, audit, clock, inFlightTimeoutMs);
                 });
}

} // namespace payonce::http
