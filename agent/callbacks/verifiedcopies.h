#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/boundedcache.h"

#include <QByteArray>

#include <atomic>
#include <chrono>
#include <optional>

namespace payonce::callbacks {

/// The notifications verified lately, by the exact bytes that were verified: a delivery's
/// channel, its signed headers (WeChat's Wechatpay-Signature, -Timestamp, -Nonce, -Serial;
/// Alipay's Content-Type) and its body. A copy byte-identical to one verified before — a
/// gateway's replay, a queue's redelivery, the same notification sent to two agents — would
/// verify to the same notification: verification is a function of those bytes and of the
/// keys, which do not change while the verifier lives. So its RSA signature and AES-GCM
/// resource are not checked again; what depends on the time (WeChat's timestamp window) is,
/// by the verifier. A copy that differs in any byte (a re-signed retry with its own
/// timestamp and nonce, one byte of the body) is not found and is verified in full.
///
/// Bounded (core::BoundedCache): `capacity` entries, each kept `ttl` at most. Only
/// successes are kept. Thread-safe.
class VerifiedCopies {
public:
    VerifiedCopies(int capacity, std::chrono::milliseconds ttl) : m_cache(capacity, ttl) {}

    /// SHA-256 over the channel, every header (name and value) and the body, each part
    /// preceded by its length, so no two different deliveries hash the same bytes.
    static QByteArray keyOf(const core::RawDelivery &delivery);

    /// A remembered notification, counted as a reuse (hits()).
    std::optional<core::PaymentNotification> find(const QByteArray &key);
    /// The same, not counted: for a look whose caller may go on to verify() the delivery
    /// anyway (and count it there), or counts what it answered itself.
    std::optional<core::PaymentNotification> peek(const QByteArray &key) { return m_cache.find(key); }
    void remember(const QByteArray &key, const core::PaymentNotification &notification)
    {
        m_cache.insert(key, notification);
    }

    /// Copies answered from here since the verifier was made.
    quint64 hits() const { return m_hits.load(); }

private:
    core::BoundedCache<QByteArray, core::PaymentNotification> m_cache;
    std::atomic<quint64> m_hits{0};
};

} // namespace payonce::callbacks
