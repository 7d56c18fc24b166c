#pragma once

#include "core/common/result.h"
#include "core/ports/intransaction.h"

#include <QByteArray>
#include <QString>

#include <optional>

namespace payonce::core {

/// The response L1 stores for a completed request: the protocol-agnostic outcome code
/// (its wire name, e.g. "created", "gateway_unavailable") and the exact body bytes sent
/// the first time. The HTTP layer maps the outcome code to its status, so a replay answers
/// exactly the first status and body.
struct StoredResponse {
    QString outcome;
    QByteArray body;

    /// One byte string for the key-store cache: "<outcome>\n<body>".
    QByteArray encode() const;
    static std::optional<StoredResponse> decode(const QByteArray &bytes);
    friend bool operator==(const StoredResponse &, const StoredResponse &) = default;
};

enum class IdempotencyStatus {
    InFlight,
    Completed
};

/// One L1 record, as the operator sees it.
struct IdempotencyRecord {
    qint64 userId = 0;
    QString key;
    QByteArray fingerprint;
    IdempotencyStatus status = IdempotencyStatus::InFlight;
    std::optional<StoredResponse> response; ///< set when Completed
    qint64 lockedAtMs = 0;
    qint64 createdAtMs = 0;
    std::optional<qint64> completedAtMs;
};

/// What begin() found.
enum class IdempotencyVerdict {
    Started,  ///< this call inserted the in_flight record: run the request
    Replay,   ///< completed with the same fingerprint: answer the stored response
    Mismatch, ///< the key was used with another request body (422 idempotency_key_reused)
    InFlight, ///< the same request is still running (409 request_in_progress + Retry-After)
};

struct IdempotencyBegin {
    IdempotencyVerdict verdict = IdempotencyVerdict::Started;
    std::optional<StoredResponse> response; ///< for Replay
    QString owner = {}; ///< for Started: this request's claim on the record (heartbeat, complete, release)
};

/// L1, durable: one record per (user_id, key) in the database — the truth; the key-store
/// cache (IdempotencyCache) is only a faster way to find completed ones.
///
/// begin() inserts an `in_flight` record if none exists — the unique index on
/// (user_id, key) decides, never a prior SELECT — and otherwise classifies the existing
/// record (Mismatch before anything else when the fingerprint differs). Of any number of
/// concurrent begin() calls for one (user, key), exactly one gets Started.
///
/// Started hands out an owner (random): the request's claim on its record. While the
/// request runs, heartbeat() keeps the record's lock fresh (every quarter of the timeout,
/// however long the gateway takes). An `in_flight` record whose lock is older than the
/// store's in-flight timeout belongs to a request that died (kill -9, a lost commit of
/// complete()): begin() with the same fingerprint takes it over — a compare-and-set on
/// the old locked_at, so exactly one taker gets Started, with a new owner — instead of
/// answering InFlight until the 24 h purge.
///
/// What is stored (Stripe's rule): a request that started executing — it consumed its
/// one-time token and so can never run again the same way — stores its response with
/// complete(), whatever it was (created, duplicate, state conflict, gateway unavailable).
/// A request refused before it executed (bad token, lock held, order not found or not
/// the user's, a storage failure that rolled everything back) calls release(): the
/// record is deleted, so the client may retry with the same key.
///
/// heartbeat(), complete() and release() are compare-and-set on (owner, status
/// in_flight): they return false when the record is no longer this request's in_flight
/// record (taken over, or unlocked by an operator), and then write nothing — a request
/// that was taken over never overwrites or deletes its taker's record. unlockStuck() deletes an in_flight
/// record locked before `olderThanMs` (the operator's way out for a crashed agent).
/// purgeOlderThan() deletes records created before the cutoff (24 h retention).
///
/// Thread-safe; every call is its own short transaction; all are safe to retry.
class IdempotencyStore {
public:
    virtual ~IdempotencyStore() = default;

    /// How old an in_flight lock must be before begin() takes the record over.
    virtual qint64 inFlightTimeoutMs() const = 0;
    virtual Result<IdempotencyBegin> begin(qint64 userId, const QString &key, const QByteArray &fingerprint,
                                           qint64 nowMs) = 0;
    /// locked_at = nowMs for the owner's in_flight record.
    virtual Result<bool> heartbeat(qint64 userId, const QString &key, const QString &owner, qint64 nowMs) = 0;
    virtual Result<bool> complete(qint64 userId, const QString &key, const QString &owner,
                                  const StoredResponse &response, qint64 nowMs) = 0;
    virtual Result<bool> release(qint64 userId, const QString &key, const QString &owner) = 0;
    virtual Result<std::optional<IdempotencyRecord>> find(qint64 userId, const QString &key) = 0;
    /// `audit` runs in the delete's transaction, only when a record was deleted.
    virtual Result<bool> unlockStuck(qint64 userId, const QString &key, qint64 olderThanMs,
                                     const InTransaction &audit = {}) = 0;
    virtual Result<int> purgeOlderThan(qint64 cutoffMs) = 0;
};

} // namespace payonce::core
