#include "core/confirm/confirmpipeline.h"

#include "core/confirm/inflightheartbeat.h"
#include "core/confirm/paymentrecord.h"
#include "core/orders/orderstatus.h"
#include "core/ports/clock.h"
#include "core/ports/distributedlock.h"
#include "core/ports/idempotencycache.h"
#include "core/ports/idempotencystore.h"
#include "core/ports/paymentgateway.h"
#include "core/ports/paymentstore.h"
#include "core/ports/tokenstore.h"

#include "logging/categories.h"

#include <QCryptographicHash>
#include <QJsonObject>
#include <QRandomGenerator>

#include <algorithm>
#include <memory>

namespace payonce::core {

using Code = PaymentOutcomeCode;

QByteArray confirmFingerprint(const ConfirmRequest &request)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(request.orderNo.toUtf8());
    hash.addData(QByteArrayView("\n"));
    hash.addData(channelName(request.channel).toUtf8());
    hash.addData(QByteArrayView("\n"));
    hash.addData(request.token.toUtf8());
    return hash.result().toHex();
}

QString paymentTokenScope(qint64 userId, const QString &orderNo)
{
    return QStringLiteral("pay:%1:%2").arg(userId).arg(orderNo);
}

namespace {

QString userScope(qint64 userId)
{
    return QStringLiteral("user:%1").arg(userId);
}

PaymentOutcome replayOf(const StoredResponse &stored)
{
    PaymentOutcome out;
    out.code = paymentOutcomeFromName(stored.outcome).value_or(Code::Internal);
    out.layer = Layer::IdempotencyKey;
    out.body = stored.body;
    out.replayed = true;
    return out;
}

/// The error a transaction returns when a layer decided the request inside it: it rolls back.
Error decidedInside()
{
    return Error::make(ErrorCode::Conflict, QStringLiteral("confirm decided inside the transaction"));
}

PaymentOutcome serviceUnavailable(const Error &error)
{
    qCWarning(payonce::lcCore) << "confirm: storage failed:" << error.internalMessage;
    return PaymentOutcome::error(Code::ServiceUnavailable, Layer::None,
                                 QStringLiteral("the payment service is temporarily unavailable; retry later"));
}

PaymentOutcome duplicateOf(const PaymentRecord &record, OrderStatus orderStatus)
{
    return PaymentOutcome::success(
        Code::DuplicatePayment, Layer::UniqueIndex,
        QJsonObject{{QStringLiteral("order_no"), record.orderNo},
                    {QStringLiteral("payment_no"), record.paymentNo},
                    {QStringLiteral("status"), orderStatusName(orderStatus)},
                    {QStringLiteral("payment_status"), paymentRecordStatusName(record.status)},
                    {QStringLiteral("code_url"), record.codeUrl},
                    {QStringLiteral("duplicate"), true}});
}

PaymentOutcome stateConflict(OrderStatus status)
{
    return PaymentOutcome::error(Code::OrderStateConflict, Layer::StateMachine,
                                 QStringLiteral("the order is %1, not PENDING").arg(orderStatusName(status)),
                                 QJsonObject{{QStringLiteral("status"), orderStatusName(status)}});
}

} // namespace

/// What execute() decided: the answer, and whether L1 stores it (the request executed)
/// or releases the key (it was refused before executing).
struct ConfirmPipeline::Execution {
    PaymentOutcome outcome;
    bool store = false;
};

/// What the confirm transaction committed: the record to send to the gateway.
struct ConfirmPipeline::Prepared {
    PaymentRecord record;
    bool reused = false;
    std::optional<qint64> fence;
};

ConfirmPipeline::ConfirmPipeline(IdempotencyStore &idempotency, IdempotencyCache *cache, TokenStore &tokens,
                                 DistributedLock &locks, PaymentStore &payments, GatewayFor gateways,
                                 const Clock &clock, ConfirmPipelineOptions options)
    : m_idempotency(idempotency), m_cache(cache), m_tokens(tokens), m_locks(locks), m_payments(payments),
      m_gateways(std::move(gateways)), m_clock(clock), m_options(std::move(options)),
      // Four beats per timeout: one late or failed beat never lets a running confirm's
      // record look abandoned.
      m_heartbeat(std::make_unique<InFlightHeartbeat>(
          idempotency, clock, std::chrono::milliseconds(std::max<qint64>(10, idempotency.inFlightTimeoutMs() / 4))))
{
}

ConfirmPipeline::~ConfirmPipeline() = default;

PaymentOutcome ConfirmPipeline::confirm(const ConfirmRequest &request)
{
    PaymentOutcome outcome = decide(request);
    m_byLayer[std::size_t(outcome.layer)].fetch_add(1);
    return outcome;
}

PaymentOutcome ConfirmPipeline::decide(const ConfirmRequest &request)
{
    const QByteArray fingerprint = confirmFingerprint(request);

    // L1 fast path: a completed response in the key-store cache. A miss or an error
    // means "ask the database".
    if (m_cache) {
        auto cached = m_cache->get(userScope(request.userId), request.idempotencyKey);
        if (cached.ok() && cached.value()) {
            const CachedResponse &hit = *cached.value();
            if (hit.fingerprint != fingerprint) {
                return PaymentOutcome::error(Code::IdempotencyKeyReused, Layer::IdempotencyKey,
                                             QStringLiteral("this Idempotency-Key was used with another request"));
            }
            if (auto stored = StoredResponse::decode(hit.response))
                return replayOf(*stored);
        }
    }

    // L1, durable: the unique index on (user_id, key) decides who runs.
    auto begun = m_idempotency.begin(request.userId, request.idempotencyKey, fingerprint, m_clock.nowMs());
    if (!begun.ok())
        return serviceUnavailable(begun.error());
    switch (begun.value().verdict) {
    case IdempotencyVerdict::Replay: {
        const StoredResponse &stored = *begun.value().response;
        if (m_cache) {
            (void)m_cache->put(userScope(request.userId), request.idempotencyKey,
                               CachedResponse{fingerprint, stored.encode()}, m_options.cacheTtl);
        }
        return replayOf(stored);
    }
    case IdempotencyVerdict::Mismatch:
        return PaymentOutcome::error(Code::IdempotencyKeyReused, Layer::IdempotencyKey,
                                     QStringLiteral("this Idempotency-Key was used with another request"));
    case IdempotencyVerdict::InFlight: {
        PaymentOutcome out = PaymentOutcome::error(
            Code::RequestInProgress, Layer::IdempotencyKey,
            QStringLiteral("a request with this Idempotency-Key is in progress"));
        out.retryAfterSeconds = m_options.retryAfterSeconds;
        return out;
    }
    case IdempotencyVerdict::Started: break;
    }

    const QString owner = begun.value().owner;
    const Execution done = [&] {
        const InFlightHeartbeat::Registration beating = m_heartbeat->beatFor(request.userId, request.idempotencyKey,
                                                                             owner);
        return execute(request);
    }();
    if (done.store) {
        const StoredResponse stored{paymentOutcomeName(done.outcome.code), done.outcome.body};
        auto completed = m_idempotency.complete(request.userId, request.idempotencyKey, owner, stored, m_clock.nowMs());
        if (!completed.ok()) {
            qCWarning(payonce::lcCore) << "confirm: L1 record not completed (stays in_flight until unlocked):"
                                       << completed.error().internalMessage;
        } else if (!completed.value()) {
            qCWarning(payonce::lcCore)
                << "confirm: L1 record of user" << request.userId << "key" << request.idempotencyKey
                << "was taken over or unlocked while this confirm ran; its response is not stored";
        } else if (m_cache) {
            (void)m_cache->put(userScope(request.userId), request.idempotencyKey,
                               CachedResponse{fingerprint, stored.encode()}, m_options.cacheTtl);
        }
    } else {
        auto released = m_idempotency.release(request.userId, request.idempotencyKey, owner);
        if (!released.ok()) {
            qCWarning(payonce::lcCore) << "confirm: L1 record not released (stays in_flight until unlocked):"
                                       << released.error().internalMessage;
        }
    }
    return done.outcome;
}

ConfirmPipeline::Execution ConfirmPipeline::execute(const ConfirmRequest &request)
{
    if (auto refused = checkOwner(request))
        return *refused;
    if (auto refused = spendToken(request))
        return *refused;
    std::unique_ptr<LockHandle> lock;
    if (auto refused = takeLock(request, lock))
        return *refused;

    // One transaction: L4 then L5. `decided` is set when the transaction ends the request
    // (a duplicate, a conflict); the work then rolls back on purpose.
    Prepared prepared;
    prepared.fence = lock ? std::optional<qint64>(qint64(lock->fencingToken())) : std::nullopt;
    std::optional<Execution> decided;
    auto committed = m_payments.inTransaction([&](ConfirmTransaction &tx) -> Result<void> {
        decided.reset();
        prepared.reused = false;
        return prepareInTransaction(tx, request, lock.get(), prepared, decided);
    });

    // COMMIT (or rollback) is behind us: only now the lock goes (docs/design.md rule 1).
    if (lock)
        (void)lock->release();

    if (decided)
        return *decided;
    if (!committed.ok())
        return {serviceUnavailable(committed.error()), false};
    return {callGatewayAndFinish(request, prepared), true};
}

/// Who may pay: the order must exist and be X-User-Id's.
std::optional<ConfirmPipeline::Execution> ConfirmPipeline::checkOwner(const ConfirmRequest &request)
{
    // Decided before the token is
    // spent, from columns that never change (a read, not a state decision), so an
    // unknown or another user's order gets 404 / 403 whatever the key store's state.
    // The transaction below checks again on the row it locks.
    auto owner = m_payments.findOrder(request.orderNo);
    if (!owner.ok())
        return Execution{serviceUnavailable(owner.error()), false};
    if (!owner.value())
        return Execution{PaymentOutcome::error(Code::OrderNotFound, Layer::Rejected,
                                               QStringLiteral("no order %1").arg(request.orderNo)),
                         false};
    if (owner.value()->userId != request.userId)
        return Execution{PaymentOutcome::error(Code::OrderNotYours, Layer::Rejected,
                                               QStringLiteral("the order belongs to another user")),
                         false};

    return std::nullopt;
}

std::optional<ConfirmPipeline::Execution> ConfirmPipeline::spendToken(const ConfirmRequest &request)
{
    // L2: the one-time token, compare-and-delete.
    auto consumed = m_tokens.consume(paymentTokenScope(request.userId, request.orderNo), request.token);
    if (!consumed.ok()) {
        if (qint64 heldBack = 0; m_tokenUnavailableLog.admit(m_clock.nowMs(), &heldBack))
            qCWarning(payonce::lcCore).noquote()
                << "confirm: L2 could not decide (key store degraded):" << consumed.error().internalMessage
                << QStringLiteral("(%1 more since the last such line)").arg(heldBack);
    } else if (!consumed.value()) {
        return Execution{PaymentOutcome::error(Code::DuplicateRequest, Layer::Token,
                                               QStringLiteral("this payment token was already used or is unknown")),
                         false};
    }

    return std::nullopt;
}

std::optional<ConfirmPipeline::Execution> ConfirmPipeline::takeLock(const ConfirmRequest &request,
                                                                    std::unique_ptr<LockHandle> &lock)
{
    // L3: the order's lock, with a fencing token for the order.
    auto acquired = m_locks.acquire(QStringLiteral("lock:order:") + request.orderNo, m_options.lockTtl,
                                    request.orderNo);
    if (!acquired.ok()) {
        if (qint64 heldBack = 0; m_lockUnavailableLog.admit(m_clock.nowMs(), &heldBack))
            qCWarning(payonce::lcCore).noquote()
                << "confirm: L3 unavailable (key store degraded), L4/L5 decide:" << acquired.error().internalMessage
                << QStringLiteral("(%1 more since the last such line)").arg(heldBack);
    } else if (!acquired.value()) {
        PaymentOutcome out = PaymentOutcome::error(Code::RequestInProgress, Layer::Lock,
                                                   QStringLiteral("another payment attempt for this order is running"));
        out.retryAfterSeconds = m_options.retryAfterSeconds;
        return Execution{out, false};
    } else {
        lock = std::move(acquired).value();
    }

    return std::nullopt;
}

/// L4 then L5 inside the confirm's transaction: the payment record claimed (or a failed one
/// reused), the order moved PENDING -> PAYING under the fence. Ends the request through
/// *decided (and a deliberate rollback) when a layer decides it.
Result<void> ConfirmPipeline::prepareInTransaction(ConfirmTransaction &tx, const ConfirmRequest &request,
                                                   LockHandle *lock, Prepared &prepared,
                                                   std::optional<Execution> &decided)
{
    auto order = tx.order(request.orderNo);
    if (!order.ok())
        return order.error();
    if (!order.value()) {
        decided = Execution{PaymentOutcome::error(Code::OrderNotFound, Layer::Rejected,
                                                  QStringLiteral("no order %1").arg(request.orderNo)),
                            false};
        return decidedInside();
    }
    const OrderSnapshot snapshot = *order.value();
    if (snapshot.userId != request.userId) {
        decided = Execution{PaymentOutcome::error(Code::OrderNotYours, Layer::Rejected,
                                                  QStringLiteral("the order belongs to another user")),
                            false};
        return decidedInside();
    }

    PaymentRecord record;
    if (auto claimed = claimRecord(tx, request, snapshot, record, prepared, decided); !claimed.ok())
        return claimed;
    auto moved = tx.transition(request.orderNo, OrderStatus::Pending, OrderStatus::Paying, prepared.fence);
    if (!moved.ok())
        return moved.error();
    switch (moved.value()) {
    case TransitionOutcome::Transitioned: break;
    case TransitionOutcome::Lost: {
        auto now = tx.order(request.orderNo);
        const OrderStatus status = now.ok() && now.value() ? now.value()->status : snapshot.status;
        decided = Execution{stateConflict(status), true};
        return decidedInside();
    }
    case TransitionOutcome::StaleFence: {
        PaymentOutcome out = PaymentOutcome::error(Code::RequestInProgress, Layer::Lock,
                                                   QStringLiteral("a newer payment attempt holds this order"));
        out.retryAfterSeconds = m_options.retryAfterSeconds;
        decided = Execution{out, false};
        return decidedInside();
    }
    case TransitionOutcome::NotFound:
        decided = Execution{PaymentOutcome::error(Code::OrderNotFound, Layer::Rejected,
                                                  QStringLiteral("no order %1").arg(request.orderNo)),
                            false};
        return decidedInside();
    }
    // A lease we can no longer rely on must not COMMIT (the fence would refuse a late
    // holder anyway; this stops the on-time one that noticed).
    if (lock && lock->lost()) {
        PaymentOutcome out = PaymentOutcome::error(Code::RequestInProgress, Layer::Lock,
                                                   QStringLiteral("the order lock was lost; retry"));
        out.retryAfterSeconds = m_options.retryAfterSeconds;
        decided = Execution{out, false};
        return decidedInside();
    }
    prepared.record = record;
    return {};
}

/// L4: a new payment record for the order and channel, or the existing one — a duplicate
/// unless it failed, which this attempt reuses.
Result<void> ConfirmPipeline::claimRecord(ConfirmTransaction &tx, const ConfirmRequest &request,
                                          const OrderSnapshot &snapshot, PaymentRecord &record, Prepared &prepared,
                                          std::optional<Execution> &decided)
{
    record = PaymentRecord{
        newPaymentNo(), request.orderNo, request.channel, PaymentRecordStatus::Creating, 1, snapshot.amountFen, {}, {}};
    auto inserted = tx.insertRecordIfAbsent(record);
    if (!inserted.ok())
        return inserted.error();
    if (!inserted.value()) {
        auto existing = tx.record(request.orderNo, request.channel);
        if (!existing.ok())
            return existing.error();
        if (!existing.value())
            return Error::make(ErrorCode::Busy, QStringLiteral("payment record vanished; run again"));
        record = *existing.value();
        if (record.status != PaymentRecordStatus::Failed) {
            decided = Execution{duplicateOf(record, snapshot.status), true};
            return decidedInside();
        }
        auto reused = tx.reuseFailedRecord(record.paymentNo);
        if (!reused.ok())
            return reused.error();
        if (!reused.value()) // someone else reused it first: read again, answer duplicate
            return Error::make(ErrorCode::Busy, QStringLiteral("failed record reused concurrently; run again"));
        record.status = PaymentRecordStatus::Creating;
        record.attempt += 1;
        record.amountFen = snapshot.amountFen;
        prepared.reused = true;
    }
    return {};
}

PaymentOutcome ConfirmPipeline::callGatewayAndFinish(const ConfirmRequest &request, const Prepared &prepared)
{
    PaymentRecord record = prepared.record;
    auto codeUrl = obtainCodeUrl(request, record, prepared.reused);
    if (codeUrl.ok())
        return paymentCreated(record, codeUrl.value());
    return gatewayFailed(record, codeUrl.error(), prepared.fence);
}

/// The trade's code_url: from the platform's query when an earlier attempt reached it,
/// otherwise created (under a new out_trade_no when the platform closed the old one). The
/// record's payment_no is the one the platform knows afterwards.
Result<QString> ConfirmPipeline::obtainCodeUrl(const ConfirmRequest &request, PaymentRecord &record, bool reused)
{
    PaymentGateway *gateway = m_gateways ? m_gateways(request.channel) : nullptr;
    std::optional<QString> codeUrl;
    Error failure = Error::make(ErrorCode::Misconfigured,
                                QStringLiteral("no gateway for %1").arg(channelName(request.channel)),
                                QStringLiteral("payment channel not available"));
    if (gateway) {
        bool create = true;
        if (reused) {
            // The earlier attempt may have reached the platform: ask before creating again.
            auto trade = gateway->query(record.paymentNo);
            if (!trade.ok()) {
                failure = trade.error();
                create = false;
            } else if (trade.value().state == GatewayTradeState::Paid
                       || (trade.value().state == GatewayTradeState::NotPaid && !trade.value().codeUrl.isEmpty())) {
                codeUrl = trade.value().codeUrl;
                create = false;
            } else if (trade.value().state == GatewayTradeState::Closed) {
                // Closed there (the platform's own timeout, an operator): it never creates
                // this out_trade_no again, so the attempt goes on under a new one.
                const QString fresh = newPaymentNo();
                auto renumbered = m_payments.inTransaction([&](ConfirmTransaction &tx) -> Result<void> {
                    auto changed = tx.renumberRecord(record.paymentNo, fresh);
                    if (!changed.ok())
                        return changed.error();
                    if (!changed.value())
                        return Error::make(ErrorCode::Conflict, QStringLiteral("payment record moved on"));
                    return {};
                });
                if (renumbered.ok()) {
                    record.paymentNo = fresh;
                } else {
                    failure = renumbered.error();
                    create = false;
                }
            }
        }
        if (create) {
            const QString notifyUrl = request.channel == Channel::WeChat ? m_options.notifyUrlWeChat
                                                                         : m_options.notifyUrlAlipay;
            auto created = gateway->createOrder(GatewayOrderRequest{record.paymentNo, record.orderNo, record.amountFen,
                                                                    m_options.description, notifyUrl,
                                                                    request.traceParent});
            if (created.ok())
                codeUrl = created.value().codeUrl;
            else
                failure = created.error();
        }
    }

    if (codeUrl)
        return *codeUrl;
    return failure;
}

/// The platform has the trade: the record is pending with its code_url, the answer 201.
PaymentOutcome ConfirmPipeline::paymentCreated(const PaymentRecord &record, const QString &codeUrl)
{
    auto stored = m_payments.inTransaction([&](ConfirmTransaction &tx) -> Result<void> {
        auto marked = tx.markRecordPending(record.paymentNo, codeUrl);
        if (!marked.ok())
            return marked.error();
        return {};
    });
    if (!stored.ok()) {
        // The order is PAYING and the platform has the trade: the code_url is real.
        // The record stays `creating`; the patrol's query settles it.
        qCWarning(payonce::lcCore) << "confirm: code_url not stored for" << record.paymentNo << ":"
                                   << stored.error().internalMessage;
    }
    return PaymentOutcome::success(Code::Created, Layer::None,
                                   QJsonObject{{QStringLiteral("order_no"), record.orderNo},
                                               {QStringLiteral("payment_no"), record.paymentNo},
                                               {QStringLiteral("status"), orderStatusName(OrderStatus::Paying)},
                                               {QStringLiteral("code_url"), codeUrl},
                                               {QStringLiteral("duplicate"), false}});
}

/// The gateway failed (or the breaker is open): the order goes back to PENDING so that a
/// later confirm (new token, new key) can reuse the record.
PaymentOutcome ConfirmPipeline::gatewayFailed(const PaymentRecord &record, const Error &failure,
                                              std::optional<qint64> fence)
{
    qCInfo(payonce::lcCore) << "confirm: gateway failed for" << record.paymentNo << ":" << failure.internalMessage;
    auto reverted = m_payments.inTransaction([&](ConfirmTransaction &tx) -> Result<void> {
        auto failed = tx.markRecordFailed(record.paymentNo, failure.internalMessage.left(500));
        if (!failed.ok())
            return failed.error();
        auto moved = tx.transition(record.orderNo, OrderStatus::Paying, OrderStatus::Pending, fence);
        if (!moved.ok())
            return moved.error();
        if (moved.value() != TransitionOutcome::Transitioned)
            return Error::make(ErrorCode::Conflict, QStringLiteral("order no longer PAYING; left as it is"));
        return {};
    });
    if (!reverted.ok()) {
        qCWarning(payonce::lcCore) << "confirm: order" << record.orderNo
                                   << "not reverted to PENDING (the patrol settles it):"
                                   << reverted.error().internalMessage;
    }
    return PaymentOutcome::error(
        Code::GatewayUnavailable, Layer::None,
        QStringLiteral("the payment platform is unavailable: %1; retry with a new token").arg(failure.publicMessage));
}

} // namespace payonce::core
