#include "sqlidempotencystore.h"

#include "dialectsql.h"

#include <QRandomGenerator>

namespace payonce::sql {

using core::Error;
using core::ErrorCode;
using core::IdempotencyBegin;
using core::IdempotencyRecord;
using core::IdempotencyStatus;
using core::IdempotencyVerdict;
using core::StoredResponse;

namespace {

const QString kSelect = QStringLiteral(
    "SELECT user_id, idem_key, fingerprint, status, outcome, response_body, locked_at, created_at, completed_at "
    "FROM idempotency_keys WHERE user_id = ? AND idem_key = ?");

IdempotencyRecord recordFrom(const QSqlQuery &q)
{
    IdempotencyRecord record;
    record.userId = q.value(0).toLongLong();
    record.key = q.value(1).toString();
    record.fingerprint = q.value(2).toString().toLatin1();
    record.status = q.value(3).toString() == QLatin1String("completed") ? IdempotencyStatus::Completed
                                                                        : IdempotencyStatus::InFlight;
    if (record.status == IdempotencyStatus::Completed)
        record.response = StoredResponse{q.value(4).toString(), q.value(5).toString().toUtf8()};
    record.lockedAtMs = q.value(6).toLongLong();
    record.createdAtMs = q.value(7).toLongLong();
    if (!q.value(8).isNull())
        record.completedAtMs = q.value(8).toLongLong();
    return record;
}

/// A request's claim on its record: 128 random bits, hex.
QString newOwner()
{
    quint64 bits[2];
    QRandomGenerator::system()->fillRange(bits);
    return QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(bits), sizeof(bits)).toHex());
}

} // namespace

core::Result<IdempotencyBegin> SqlIdempotencyStore::begin(qint64 userId, const QString &key,
                                                          const QByteArray &fingerprint, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<IdempotencyBegin> {
        static const QStringList columns{QStringLiteral("user_id"),     QStringLiteral("idem_key"),
                                         QStringLiteral("fingerprint"), QStringLiteral("status"),
                                         QStringLiteral("owner"),       QStringLiteral("locked_at"),
                                         QStringLiteral("created_at")};
        const QString owner = newOwner();
        auto inserted = session.execAffected(
            insertIfAbsentSql(session.dialect(), QStringLiteral("idempotency_keys"), columns, QStringLiteral("id")),
            {userId, key, QString::fromLatin1(fingerprint), QStringLiteral("in_flight"), owner, nowMs, nowMs},
            QStringLiteral("insert-if-absent idempotency_keys"));
        if (!inserted)
            return inserted.error();
        if (inserted.value() == 1)
            return IdempotencyBegin{IdempotencyVerdict::Started, std::nullopt, owner};

        auto query = session.exec(kSelect, {userId, key}, QStringLiteral("read idempotency record"));
        if (!query)
            return query.error();
        if (!query.value().next())
            return Error::make(ErrorCode::Busy, QStringLiteral("idempotency record released meanwhile; run again"));
        const IdempotencyRecord record = recordFrom(query.value());
        if (record.fingerprint != fingerprint)
            return IdempotencyBegin{IdempotencyVerdict::Mismatch, std::nullopt};
        if (record.status == IdempotencyStatus::InFlight) {
            if (record.lockedAtMs >= nowMs - m_inFlightTimeoutMs)
                return IdempotencyBegin{IdempotencyVerdict::InFlight, std::nullopt};
            // Its request died holding it (no heartbeat for a whole timeout): take it over
            // under a new owner, exactly one taker wins.
            auto taken = session.execAffected(
                QStringLiteral(
                    "UPDATE idempotency_keys SET locked_at = ?, owner = ? WHERE user_id = ? AND idem_key = ? "
                    "AND fingerprint = ? AND status = 'in_flight' AND locked_at = ?"),
                {nowMs, owner, userId, key, QString::fromLatin1(fingerprint), record.lockedAtMs},
                QStringLiteral("take over a stale idempotency record"));
            if (!taken)
                return taken.error();
            if (taken.value() != 1)
                return IdempotencyBegin{IdempotencyVerdict::InFlight, std::nullopt};
            return IdempotencyBegin{IdempotencyVerdict::Started, std::nullopt, owner};
        }
        return IdempotencyBegin{IdempotencyVerdict::Replay, record.response};
    });
}

core::Result<bool> SqlIdempotencyStore::heartbeat(qint64 userId, const QString &key, const QString &owner, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto affected = session.execAffected(
            QStringLiteral("UPDATE idempotency_keys SET locked_at = ? WHERE user_id = ? AND idem_key = ? AND owner = ? "
                           "AND status = 'in_flight'"),
            {nowMs, userId, key, owner}, QStringLiteral("heartbeat idempotency record"));
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    });
}

core::Result<bool> SqlIdempotencyStore::complete(qint64 userId, const QString &key, const QString &owner,
                                                 const StoredResponse &response, qint64 nowMs)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto affected = session.execAffected(
            QStringLiteral("UPDATE idempotency_keys SET status = 'completed', outcome = ?, response_body = ?, "
                           "completed_at = ? WHERE user_id = ? AND idem_key = ? AND owner = ? "
                           "AND status = 'in_flight'"),
            {response.outcome, QString::fromUtf8(response.body), nowMs, userId, key, owner},
            QStringLiteral("complete idempotency record"));
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    });
}

core::Result<bool> SqlIdempotencyStore::release(qint64 userId, const QString &key, const QString &owner)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto affected = session.execAffected(
            QStringLiteral("DELETE FROM idempotency_keys WHERE user_id = ? AND idem_key = ? AND owner = ? "
                           "AND status = 'in_flight'"),
            {userId, key, owner}, QStringLiteral("release idempotency record"));
        if (!affected)
            return affected.error();
        return affected.value() == 1;
    });
}

core::Result<std::optional<IdempotencyRecord>> SqlIdempotencyStore::find(qint64 userId, const QString &key)
{
    return m_database.read([&](Session &session) -> core::Result<std::optional<IdempotencyRecord>> {
        auto query = session.exec(kSelect, {userId, key}, QStringLiteral("read idempotency record"));
        if (!query)
            return query.error();
        if (!query.value().next())
            return std::optional<IdempotencyRecord>();
        return std::optional<IdempotencyRecord>(recordFrom(query.value()));
    });
}

core::Result<bool> SqlIdempotencyStore::unlockStuck(qint64 userId, const QString &key, qint64 olderThanMs,
                                                    const core::InTransaction &audit)
{
    return m_database.write([&](Session &session) -> core::Result<bool> {
        auto affected = session.execAffected(
            QStringLiteral("DELETE FROM idempotency_keys WHERE user_id = ? AND idem_key = ? "
                           "AND status = 'in_flight' AND locked_at < ?"),
            {userId, key, olderThanMs}, QStringLiteral("unlock stuck idempotency record"));
        if (!affected)
            return affected.error();
        if (affected.value() != 1)
            return false;
        if (audit) {
            if (auto audited = audit(); !audited)
                return audited.error();
        }
        return true;
    });
}

core::Result<int> SqlIdempotencyStore::purgeOlderThan(qint64 cutoffMs)
{
    return m_database.write([&](Session &session) -> core::Result<int> {
        return session.execAffected(QStringLiteral("DELETE FROM idempotency_keys WHERE created_at < ?"), {cutoffMs},
                                    QStringLiteral("purge idempotency records"));
    });
}

} // namespace payonce::sql
