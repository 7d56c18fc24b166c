#pragma once

#include "core/common/channel.h"
#include "core/common/logthrottle.h"
#include "core/common/result.h"
#include "core/confirm/paymentoutcome.h"

#include <QByteArray>
#include <QString>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

namespace payonce::core {

class Clock;
class ConfirmTransaction;
class DistributedLock;
class IdempotencyCache;
class IdempotencyStore;
class InFlightHeartbeat;
class LockHandle;
class PaymentGateway;
class PaymentStore;
struct OrderSnapshot;
struct PaymentRecord;
class TokenStore;

/// A confirm as the route decoded it (headers X-User-Id and Idempotency-Key, body
/// {"token","order_no","channel"}). The route has validated the key
/// (checkIdempotencyKey) and the user id.
struct ConfirmRequest {
    qint64 userId = 0;
    QString idempotencyKey;
    QString token;
    QString orderNo;
    Channel channel = Channel::WeChat;
    /// W3C traceparent the gateway call carries (the request's trace); may be empty. Not
    /// part of the fingerprint: a retry with the same body is the same request.
    QString traceParent = {};
};

/// The L1 fingerprint of a confirm: SHA-256 (hex) over order_no, channel and token —
/// what "the same body" means for Idempotency-Key.
QByteArray confirmFingerprint(const ConfirmRequest &request);

/// The L2 token scope of (user, order): "pay:<user_id>:<order_no>".
QString paymentTokenScope(qint64 userId, const QString &orderNo);

struct ConfirmPipelineOptions {
    std::chrono::milliseconds lockTtl{std::chrono::seconds(10)};
    /// How long a completed response stays in the key-store cache.
    std::chrono::milliseconds cacheTtl{std::chrono::hours(24)};
    int retryAfterSeconds = 1;
    QString notifyUrlWeChat;
    QString notifyUrlAlipay;
    QString description = QStringLiteral("payonce order");
};

/// The confirm path (docs/design.md, "Confirm path"), in this order and no other:
///
///   L1 begin (the key-store cache first: a completed response is replayed without the
///   database; the database record stays the truth) → L2 consume the token (Lua CAD) →
///   L3 lock `lock:order:{order_no}` with a fencing token → one transaction: the order
///   must be the user's; payment record `creating` if absent (L4; a `failed` one is
///   reused, attempt + 1; a live one answers duplicate) → CAS PENDING→PAYING fenced (L5)
///   → COMMIT → unlock → the gateway (the caller passes breaker(retry(call)) decorated
///   gateways): for a reused record query first and create only when the platform has no
///   usable trade → a short transaction: record pending + code_url, or record failed and
///   PAYING→PENDING → L1 completed with the outcome.
///
/// No lock or transaction spans the gateway call; the lock is released only after
/// COMMIT (or rollback). From L1 begin to complete or release, the L1 record's lock is
/// kept fresh by a heartbeat every quarter of the store's in-flight timeout, so a retry
/// of a confirm that is still running (a slow gateway) is answered request_in_progress,
/// never taken over; complete() and release() act only on this request's own record. Which outcomes L1 stores: see IdempotencyStore. With the key
/// store unreachable, L2 and L3 are skipped (counted as degraded by the caller) and the
/// durable layers decide: L1 in the database, L4, and L5 without a fence.
///
/// Thread-safe: run confirm() on worker threads, never the event loop (it blocks on
/// storage and the gateway). The ports must outlive the pipeline.
class ConfirmPipeline {
public:
    using GatewayFor = std::function<PaymentGateway *(Channel)>;

    ConfirmPipeline(IdempotencyStore &idempotency, IdempotencyCache *cache, TokenStore &tokens, DistributedLock &locks,
                    PaymentStore &payments, GatewayFor gateways, const Clock &clock,
                    ConfirmPipelineOptions options = {});
    ~ConfirmPipeline();

    PaymentOutcome confirm(const ConfirmRequest &request);

    /// Counter (atomic read): confirms decided by each layer (None: run for the first time).
    qint64 decidedBy(Layer layer) const { return m_byLayer[std::size_t(layer)].load(); }

private:
    PaymentOutcome decide(const ConfirmRequest &request);
    struct Execution;
    struct Prepared;
    Execution execute(const ConfirmRequest &request);
    // The layers before the transaction: each a refusal, or nullopt to go on.
    std::optional<Execution> checkOwner(const ConfirmRequest &request);
    std::optional<Execution> spendToken(const ConfirmRequest &request);
    std::optional<Execution> takeLock(const ConfirmRequest &request, std::unique_ptr<LockHandle> &lock);
    Result<void> prepareInTransaction(ConfirmTransaction &tx, const ConfirmRequest &request, LockHandle *lock,
                                      Prepared &prepared, std::optional<Execution> &decided);
    Result<void> claimRecord(ConfirmTransaction &tx, const ConfirmRequest &request, const OrderSnapshot &snapshot,
                             PaymentRecord &record, Prepared &prepared, std::optional<Execution> &decided);
    PaymentOutcome callGatewayAndFinish(const ConfirmRequest &request, const Prepared &prepared);
    Result<QString> obtainCodeUrl(const ConfirmRequest &request, PaymentRecord &record, bool reused);
    PaymentOutcome paymentCreated(const PaymentRecord &record, const QString &codeUrl);
    PaymentOutcome gatewayFailed(const PaymentRecord &record, const Error &failure, std::optional<qint64> fence);

    IdempotencyStore &m_idempotency;
    IdempotencyCache *m_cache;
    TokenStore &m_tokens;
    DistributedLock &m_locks;
    PaymentStore &m_payments;
    GatewayFor m_gateways;
    const Clock &m_clock;
    ConfirmPipelineOptions m_options;
    LogThrottle m_tokenUnavailableLog; ///< one line a second each while Redis is down
    LogThrottle m_lockUnavailableLog;
    std::array<std::atomic<qint64>, allLayers.size()> m_byLayer{};
    std::unique_ptr<InFlightHeartbeat> m_heartbeat;
};

} // namespace payonce::core
