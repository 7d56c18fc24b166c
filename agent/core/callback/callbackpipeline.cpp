// The callback pipeline's entry points (a delivery, the worker's row, the patrol's query,
// the replay), the outcomes it answers with, and what every path shares: the delivery's
// row, its decision, the counters. The path itself: callbackreceive.cpp, callbacksettle.cpp,
// callbackonecommit.cpp, callbackreplay.cpp.
#include "core/callback/callbackpipeline.h"

#include "core/callback/callbackpipelinecontext.h"

#include "core/metrics/streamevents.h"
#include "core/ports/callbackhistory.h"
#include "core/ports/clock.h"
#include "core/ports/idempotencycache.h"
#include "core/ports/notificationverifier.h"
#include "core/ports/paymentgateway.h"

#include "logging/categories.h"

#include <QJsonObject>
#include <QRandomGenerator>

#include <condition_variable>

namespace payonce::core {

using Code = CallbackOutcomeCode;

QString logRowStatusName(LogRowStatus status)
{
    return status == LogRowStatus::Processed ? QStringLiteral("processed") : QStringLiteral("accepted");
}

QString callbackOutcomeName(CallbackOutcomeCode code)
{
    switch (code) {
    case Code::Success: return QStringLiteral("success");
    case Code::BadSignature: return QStringLiteral("bad_signature");
    case Code::InvalidNotification: return QStringLiteral("invalid_notification");
    case Code::ContentMismatch: return QStringLiteral("content_mismatch");
    case Code::UnknownOrder: return QStringLiteral("unknown_order");
    case Code::Unavailable: return QStringLiteral("service_unavailable");
    case Code::Internal: break;
    }
    return QStringLiteral("internal_error");
}

PaymentNotification confirmedByQuery(Channel channel, const QString &paymentNo, const GatewayTrade &trade)
{
    PaymentNotification confirmed;
    confirmed.channel = channel;
    confirmed.payNo = trade.payNo;
    confirmed.paymentNo = paymentNo;
    confirmed.amountFen = trade.amountFen;
    confirmed.paid = true;
    confirmed.tradeState = QStringLiteral("paid (gateway query)");
    return confirmed;
}

Result<CallbackLayerSwitches> CallbackLayerSwitches::fromNames(const QStringList &disableLayers)
{
    CallbackLayerSwitches out;
    for (const QString &name : disableLayers) {
        if (name == QLatin1String("lock"))
            out.disableLock = true;
        else if (name == QLatin1String("unique_index"))
            out.disableUniqueIndex = true;
        else if (name == QLatin1String("state_machine"))
            out.disableStateMachine = true;
        else if (name == QLatin1String("side_effect"))
            out.disableSideEffect = true;
        else
            return Error::make(ErrorCode::InvalidInput,
                               QStringLiteral("unknown layer in disable_layers: %1").arg(name));
    }
    return out;
}

CallbackLayerSwitches CallbackLayerSwitches::with(const CallbackLayerSwitches &other) const
{
    CallbackLayerSwitches out = *this;
    out.disableLock = disableLock || other.disableLock;
    out.disableUniqueIndex = disableUniqueIndex || other.disableUniqueIndex;
    out.disableStateMachine = disableStateMachine || other.disableStateMachine;
    out.disableSideEffect = disableSideEffect || other.disableSideEffect;
    out.unlockBeforeCommit = unlockBeforeCommit || other.unlockBeforeCommit;
    return out;
}

namespace callbackpath {

CallbackOutcome make(Code code, Layer layer, const QString &note, const QString &message, bool durable)
{
    CallbackOutcome out;
    out.code = code;
    out.layer = layer;
    out.note = note;
    out.message = message;
    out.durable = durable;
    return out;
}

CallbackOutcome success(Layer layer, const QString &note, bool durable)
{
    return make(Code::Success, layer, note, QStringLiteral("OK"), durable);
}

CallbackOutcome unavailable(Layer layer, const QString &note, const QString &why)
{
    // Every copy meets it while the database is down: one line a second, the rest counted.
    static LogThrottle throttle;
    const qint64 nowMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
    if (qint64 heldBack = 0; throttle.admit(nowMs, &heldBack))
        qCWarning(payonce::lcCore).noquote() << "callback: temporary failure (" << note << "):" << why
                                             << QStringLiteral("(%1 more since the last such line)").arg(heldBack);
    return make(Code::Unavailable, layer, note, QStringLiteral("temporarily unavailable; retry"));
}

CallbackOutcome abortedByHook()
{
    return make(Code::Internal, Layer::None, QStringLiteral("aborted_by_hook"), QStringLiteral("stopped"));
}

QString nonce()
{
    return QString::number(QRandomGenerator::system()->generate64(), 36);
}

QString subjectOf(Channel channel, const QString &payNo)
{
    return channelName(channel) + QLatin1Char(':') + payNo;
}

bool paidBy(const CallbackOrder &order, const QString &payNo)
{
    const bool paidState = order.status == OrderStatus::Paid || order.status == OrderStatus::Refunding
                           || order.status == OrderStatus::Refunded;
    return paidState && order.payNo == payNo;
}

Result<QString> lostCasOutcome(CallbackTransaction &tx, const QString &orderNo, const PaymentNotification &n,
                               QList<CallbackFinding> &newFindings)
{
    auto now = tx.order(orderNo);
    if (!now.ok())
        return now.error();
    if (!now.value())
        return Error::make(ErrorCode::Internal, QStringLiteral("order vanished after a lost CAS"));
    const CallbackOrder &current = *now.value();
    if (paidBy(current, n.payNo))
        return QStringLiteral("already_paid");
    // Money received twice (a second pay_no, or a payment for a CLOSED order):
    // acknowledged, and a finding proposes the refund.
    const CallbackFinding finding{QStringLiteral("double_payment"), subjectOf(n.channel, n.payNo), orderNo, n.payNo,
                                  QJsonObject{{QStringLiteral("order_status"), orderStatusName(current.status)},
                                              {QStringLiteral("paid_pay_no"), current.payNo},
                                              {QStringLiteral("paid_channel"), current.paidChannel},
                                              {QStringLiteral("pay_no"), n.payNo},
                                              {QStringLiteral("channel"), channelName(n.channel)},
                                              {QStringLiteral("amount_fen"), n.amountFen},
                                              {QStringLiteral("proposal"), QStringLiteral("refund")}}};
    if (auto raised = raiseFindingIn(tx, finding, newFindings); !raised.ok())
        return raised.error();
    return QStringLiteral("double_payment");
}

} // namespace callbackpath

using namespace callbackpath;

CallbackPipeline::CallbackPipeline(const NotificationVerifier &verifier, CallbackStore &store, CallbackModeStore &modes,
                                   DistributedLock &locks, SeenProcessedSet *seen, const Clock &clock,
                                   CallbackPipelineOptions options)
    : m_verifier(verifier), m_store(store), m_modes(modes), m_locks(locks), m_seen(seen), m_clock(clock),
      m_options(std::move(options)),
      m_decidedDeliveries([&store](const QList<DeliveryRecord> &rows) { return store.appendDeliveries(rows); })
{
}

Result<void> CallbackPipeline::setSwitches(const CallbackLayerSwitches &switches)
{
    if (!m_options.qaEnabled)
        return Error::make(ErrorCode::Forbidden, QStringLiteral("layer switches need qa.enabled"));
    std::lock_guard guard(m_mutex);
    m_switches = switches;
    return {};
}

CallbackLayerSwitches CallbackPipeline::switches() const
{
    std::lock_guard guard(m_mutex);
    return m_switches;
}

QString CallbackPipeline::systemActor() const
{
    return QStringLiteral("system:") + (m_options.agentId.isEmpty() ? QStringLiteral("callbacks") : m_options.agentId);
}

void CallbackPipeline::publishFinding(const CallbackFinding &finding) const
{
    if (m_options.events)
        m_options.events(findingRaisedEvent(finding.kind, finding.subject, finding.orderNo, finding.payNo,
                                            finding.evidence, systemActor()));
}

void CallbackPipeline::event(const QString &name) const
{
    if (m_options.onEvent)
        m_options.onEvent(name);
}

bool CallbackPipeline::hook(CallbackHookPoint point, const Context &ctx, LockHandle *lock) const
{
    if (!m_options.testHook)
        return true;
    return m_options.testHook(point, CallbackHookContext{ctx.n.payNo, ctx.order.orderNo, lock})
           == CallbackHookAction::Continue;
}

CallbackMode CallbackPipeline::currentMode()
{
    const qint64 now = m_clock.nowMs();
    {
        std::lock_guard guard(m_mutex);
        if (m_modeReadAtMs >= 0 && now - m_modeReadAtMs < m_options.modeCacheMs)
            return m_cachedMode;
    }
    auto read = m_modes.mode();
    std::lock_guard guard(m_mutex);
    if (!read.ok()) {
        // The database is the truth and the mode lives there: when it cannot be read, the
        // last known mode stands (the log row insert will fail too if the database is down).
        qCWarning(payonce::lcCore) << "callback: mode not readable:" << read.error().internalMessage;
        return m_cachedMode;
    }
    m_cachedMode = read.value().mode;
    m_modeReadAtMs = now;
    return m_cachedMode;
}

void CallbackPipeline::noteModeSet(CallbackMode mode)
{
    std::lock_guard guard(m_mutex);
    m_cachedMode = mode;
    m_modeReadAtMs = m_clock.nowMs();
}

CallbackOutcome CallbackPipeline::finish(Context &ctx, CallbackOutcome outcome)
{
    outcome.payNo = ctx.n.payNo;
    outcome.orderNo = ctx.order.orderNo;
    if (!ctx.dryRun)
        m_byLayer[std::size_t(outcome.layer)].fetch_add(1);
    if (ctx.deliveryId && !ctx.deliveryDecided) {
        const int status = m_options.httpStatusOf ? m_options.httpStatusOf(outcome.code) : 0;
        auto decided = m_store.decideDelivery(*ctx.deliveryId, outcome.layer, status,
                                              outcome.note.isEmpty() ? callbackOutcomeName(outcome.code)
                                                                     : outcome.note);
        if (!decided.ok())
            qCWarning(payonce::lcCore) << "callback: delivery decision not stored:" << decided.error().internalMessage;
    }
    return outcome;
}

CallbackOutcome CallbackPipeline::handle(const RawDelivery &delivery)
{
    std::mutex mutex;
    std::condition_variable told;
    std::optional<CallbackOutcome> out;
    handle(delivery, [&](const CallbackOutcome &outcome) {
        // Notified under the mutex: the waiter cannot return (and take these with it)
        // before notify_one() has finished.
        std::lock_guard guard(mutex);
        out = outcome;
        told.notify_one();
    });
    std::unique_lock lock(mutex);
    told.wait(lock, [&] { return out.has_value(); });
    return *out;
}

void CallbackPipeline::answerOnceWritten(Context &ctx, DeliveryRecord row, CallbackOutcome outcome, bool finishFailure,
                                         const Answer &answer)
{
    const QString payNo = ctx.n.payNo;
    const QString orderNo = ctx.order.orderNo;
    m_decidedDeliveries.append(std::move(row),
                               [this, payNo, orderNo, outcome, finishFailure, answer](Result<qint64> written) {
                                   Context done; // what finish() reads of a delivery whose row was written decided
                                   done.n.payNo = payNo;
                                   done.order.orderNo = orderNo;
                                   done.deliveryDecided = true;
                                   if (written.ok()) {
                                       done.deliveryId = written.value();
                                       answer(finish(done, outcome));
                                       return;
                                   }
                                   const CallbackOutcome failed = unavailable(Layer::None, QStringLiteral("storage"),
                                                                              written.error().internalMessage);
                                   answer(finishFailure ? finish(done, failed) : failed);
                               });
}

void CallbackPipeline::answerUnverified(const RawDelivery &delivery, const Error &error, const Answer &answer)
{
    const Code code = error.code == ErrorCode::BadSignature ? Code::BadSignature : Code::InvalidNotification;
    DeliveryRecord record;
    record.channel = delivery.channel;
    record.receivedAtMs = delivery.receivedAtMs ? delivery.receivedAtMs : m_clock.nowMs();
    record.verified = false;
    record.layer = Layer::Rejected;
    record.httpStatus = m_options.httpStatusOf ? m_options.httpStatusOf(code) : 0;
    record.outcome = errorCodeName(error.code);
    record.agentId = m_options.agentId;
    record.traceId = delivery.traceId;
    // Metadata only: an unverified body is not ours to keep, and never reaches
    // pay_callback_log or a business table. Refused whether or not its row is written.
    m_byLayer[std::size_t(Layer::Rejected)].fetch_add(1);
    const CallbackOutcome out = make(code, Layer::Rejected, errorCodeName(error.code), error.publicMessage);
    m_decidedDeliveries.append(std::move(record), [out, answer](Result<qint64> written) {
        if (!written.ok())
            qCWarning(payonce::lcCore) << "callback: rejected delivery not recorded:"
                                       << written.error().internalMessage;
        answer(out);
    });
}

void CallbackPipeline::handle(const RawDelivery &delivery, Answer answer)
{
    Context ctx;
    ctx.raw = delivery;
    ctx.sw = switches();
    auto verified = m_verifier.verify(delivery, true, m_clock.nowMs());
    if (!verified.ok()) {
        answerUnverified(delivery, verified.error(), answer);
        return;
    }
    ctx.n = std::move(verified).value();
    const CallbackOutcome out = process(ctx);
    if (ctx.deferred) {
        Context::DeferredRow deferred = std::move(*ctx.deferred);
        answerOnceWritten(ctx, std::move(deferred.row), deferred.outcome, deferred.finishFailure, answer);
        return;
    }
    answer(out);
}

bool CallbackPipeline::handleFromMemory(const RawDelivery &delivery, const Answer &answer)
{
    // What could wait or must be judged with the database goes to handle(): a test hook may
    // pause, a QA scenario's switches are read from the database, and with the unique index
    // off the seen set does not answer.
    if (m_options.testHook || !m_seen || (m_options.qaEnabled && m_options.scenarioSwitches))
        return false;
    Context ctx;
    ctx.raw = delivery;
    ctx.sw = switches();
    if (ctx.sw.disableUniqueIndex)
        return false;
    auto verified = m_verifier.verifyFromMemory(delivery, true, m_clock.nowMs());
    if (!verified)
        return false;
    if (!verified->ok()) {
        // Bytes verified before, now outside the time window: refused as handle() refuses it.
        m_answeredFromMemory.fetch_add(1);
        answerUnverified(delivery, verified->error(), answer);
        return true;
    }
    ctx.n = std::move(*verified).value();
    const std::optional<SeenEntry> seen = m_seen->seenInMemory(channelName(ctx.n.channel), ctx.n.payNo);
    if (!seen || !seen->processed || !seenCopyMatches(ctx, *seen))
        return false;
    ctx.seenProcessed = true;
    m_answeredFromMemory.fetch_add(1);
    answerSeen(ctx);
    Q_ASSERT(ctx.deferred); // a platform delivery's row is always written
    Context::DeferredRow deferred = std::move(*ctx.deferred);
    answerOnceWritten(ctx, std::move(deferred.row), deferred.outcome, deferred.finishFailure, answer);
    return true;
}

CallbackOutcome CallbackPipeline::finishAccepted(const AcceptedCallback &row)
{
    Context ctx;
    ctx.fromWorker = true;
    ctx.durable = true;
    ctx.sw = switches();
    ctx.n.payNo = row.payNo;
    ctx.n.channel = row.channel;
    ctx.order.orderNo = row.orderNo;
    if (!row.deliveryId)
        return make(Code::Internal, Layer::Rejected, QStringLiteral("no_stored_delivery"),
                    QStringLiteral("the log row names no stored delivery"));
    if (auto failed = loadStored(ctx, *row.deliveryId))
        return *failed;
    return process(ctx);
}

CallbackOutcome CallbackPipeline::settleConfirmed(const PaymentNotification &confirmed,
                                                  const SettledInTransaction &audit)
{
    Context ctx;
    ctx.fromGatewayQuery = true;
    ctx.audit = audit;
    ctx.sw = switches();
    ctx.n = confirmed;
    // A query answer is in the merchant's own currency when it names none.
    if (ctx.n.currency.isEmpty())
        ctx.n.currency = m_options.currency;
    return process(ctx);
}

DeliveryRecord CallbackPipeline::deliveryRecordOf(const Context &ctx,
                                                  const std::optional<CallbackOutcome> &decided) const
{
    DeliveryRecord record;
    record.channel = ctx.n.channel;
    record.payNo = ctx.n.payNo;
    record.orderNo = ctx.order.orderNo;
    record.receivedAtMs = ctx.raw.receivedAtMs ? ctx.raw.receivedAtMs : m_clock.nowMs();
    record.verified = true;
    record.layer = decided ? decided->layer : Layer::None;
    record.httpStatus = decided && m_options.httpStatusOf ? m_options.httpStatusOf(decided->code) : 0;
    record.outcome = decided ? decided->note : QString();
    record.headers = ctx.raw.headers;
    record.rawBody = ctx.raw.body;
    record.agentId = m_options.agentId;
    record.traceId = ctx.raw.traceId;
    return record;
}

void CallbackPipeline::reportStaleFence(const QString &orderNo, const QString &payNo, qint64 fence)
{
    m_staleFence.fetch_add(1);
    qCWarning(payonce::lcCore) << "callback: stale fencing token refused for" << orderNo << "pay_no" << payNo;
    if (m_options.events)
        m_options.events(staleFenceRefusedEvent(orderNo, payNo, quint64(fence), systemActor()));
}

} // namespace payonce::core
