#pragma once

#include "core/common/result.h"

#include <QByteArray>
#include <QString>

#include <chrono>
#include <optional>

namespace payonce::core {

/// A completed response as L1 remembers it: the request fingerprint (to tell a replay
/// from a key reused with another body) and the response body sent the first time.
struct CachedResponse {
    QByteArray fingerprint;
    QByteArray response;
};

/// The fast path of L1: completed responses, keyed by (scope, idempotency key), kept for
/// a TTL. Only an accelerator — the database record is the truth; a miss or an
/// Unavailable error means "ask the database", never "not seen".
///
/// Thread-safe. put() is idempotent (last write wins, same content in practice) and safe
/// to retry; get() has no side effects.
class IdempotencyCache {
public:
    virtual ~IdempotencyCache() = default;
    virtual Result<std::optional<CachedResponse>> get(const QString &scope, const QString &key) = 0;
    virtual Result<void> put(const QString &scope, const QString &key, const CachedResponse &response,
                             std::chrono::milliseconds ttl) = 0;
};

/// What a processed payment was, as a copy's content checks need it: a copy that names the
/// same payment_no, amount and currency is answered without reading the order.
struct SeenPayment {
    QString orderNo;
    QString paymentNo; ///< the notification's out_trade_no
    qint64 amountFen = 0;
    QString currency;

    /// The stored form (fields joined by U+001F); decode() answers nullopt for anything
    /// else — an entry written before the content was kept ("1"), say.
    QByteArray encoded() const;
    static std::optional<SeenPayment> decode(const QByteArray &stored);
};

/// What the seen-processed set knows of a pay_no.
struct SeenEntry {
    bool processed = false;
    std::optional<SeenPayment> payment; ///< empty: processed, its content not kept
};

/// The callback fast path: pay_nos already seen `processed` (terminal and durable), with
/// what they paid, so a re-delivery can be answered SUCCESS without reading the order.
/// Bounded: entries expire after a TTL and an in-process front keeps at most a fixed
/// number. A miss means "ask the database". Thread-safe; markProcessed() is idempotent and
/// safe to retry.
class SeenProcessedSet {
public:
    virtual ~SeenProcessedSet() = default;
    virtual Result<void> markProcessed(const QString &channel, const QString &payNo, const SeenPayment &payment) = 0;
    virtual Result<SeenEntry> seen(const QString &channel, const QString &payNo) = 0;
    /// seen() from this process's memory alone, never a round trip (it may run on the HTTP
    /// event loop): nullopt when only the shared store could tell. Default: nothing kept.
    virtual std::optional<SeenEntry> seenInMemory(const QString &channel, const QString &payNo)
    {
        Q_UNUSED(channel);
        Q_UNUSED(payNo);
        return std::nullopt;
    }
};

} // namespace payonce::core
