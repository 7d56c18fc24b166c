#pragma once

#include "database.h"

#include "core/ports/idempotencystore.h"

namespace payonce::sql {

/// L1 in the database: idempotency_keys, one row per (user_id, idem_key).
///
/// begin() is one write transaction: INSERT … if absent (ON CONFLICT DO NOTHING / ON
/// DUPLICATE KEY UPDATE no-op), and only when that inserted nothing, a SELECT of the row
/// that won, to classify it — the unique index decides, never the SELECT. A row deleted
/// between the two (a concurrent release) runs the transaction again. heartbeat(),
/// complete(), release() and unlockStuck() are single-statement compare-and-sets (the
/// first three on the `owner` column, migration 006); the outcome code goes to the
/// `outcome` column (migration 002), the body to response_body.
/// Thread-safe (Database's per-thread connections).
class SqlIdempotencyStore final : public core::IdempotencyStore {
public:
    /// inFlightTimeoutMs: an in_flight record locked longer ago than this is taken over
    /// (see IdempotencyStore). A running confirm keeps its lock fresh with heartbeats, so
    /// this only has to outlast the silence of a request that died.
    explicit SqlIdempotencyStore(Database &database, qint64 inFlightTimeoutMs = 60000)
        : m_database(database), m_inFlightTimeoutMs(inFlightTimeoutMs)
    {
    }

    /// How old an in_flight lock must be before begin() takes it over — and before an
    /// operator may unlock it (POST /api/v1/idempotency-keys/{user_id}/{key}/unlock).
    qint64 inFlightTimeoutMs() const override { return m_inFlightTimeoutMs; }

    core::Result<core::IdempotencyBegin> begin(qint64 userId, const QString &key, const QByteArray &fingerprint,
                                               qint64 nowMs) override;
    core::Result<bool> heartbeat(qint64 userId, const QString &key, const QString &owner, qint64 nowMs) override;
    core::Result<bool> complete(qint64 userId, const QString &key, const QString &owner,
                                const core::StoredResponse &response, qint64 nowMs) override;
    core::Result<bool> release(qint64 userId, const QString &key, const QString &owner) override;
    core::Result<std::optional<core::IdempotencyRecord>> find(qint64 userId, const QString &key) override;
    core::Result<bool> unlockStuck(qint64 userId, const QString &key, qint64 olderThanMs,
                                   const core::InTransaction &audit = {}) override;
    core::Result<int> purgeOlderThan(qint64 cutoffMs) override;

private:
    Database &m_database;
    qint64 m_inFlightTimeoutMs;
};

} // namespace payonce::sql
