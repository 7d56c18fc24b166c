#include "core/callback/callbackpipeline.h"

#include "core/callback/callbackpipelinecontext.h"
#include "core/callback/paideffects.h"

#include "core/metrics/streamevents.h"
#include "core/ports/callbackhistory.h"
#include "core/ports/clock.h"
#include "core/ports/distributedlock.h"
#include "core/ports/idempotencycache.h"
#include "core/ports/notificationverifier.h"
#include "core/ports/paymentgateway.h"

#include "logging/categories.h"

#include <QJsonObject>
#include <QRandomGenerator>
#include <QSet>

#include <condition_variable>
#include <memory>
#include <thread>

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

void CallbackPipeline::handle(const RawDelivery &delivery, Answer answer)
{
    Context ctx;
    ctx.raw = delivery;
    ctx.sw = switches();
    auto verified = m_verifier.verify(delivery, true, m_clock.nowMs());
    if (!verified.ok()) {
        const Error &error = verified.error();
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
                qCWarning(payonce::lcCore)
                    << "callback: rejected delivery not recorded:" << written.error().internalMessage;
            answer(out);
        });
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

std::optional<CallbackOutcome> CallbackPipeline::loadStored(Context &ctx, qint64 deliveryId)
{
    auto raw = m_store.rawDelivery(deliveryId);
    if (!raw.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), raw.error().internalMessage);
    if (!raw.value())
        return make(Code::Internal, Layer::Rejected, QStringLiteral("no_stored_delivery"),
                    QStringLiteral("the stored delivery is missing"));
    ctx.raw = *raw.value();
    // Re-verified as on receipt, except the time window (checked then).
    auto verified = m_verifier.verify(ctx.raw, false, m_clock.nowMs());
    if (!verified.ok()) {
        return make(verified.error().code == ErrorCode::BadSignature ? Code::BadSignature : Code::InvalidNotification,
                    Layer::Rejected, errorCodeName(verified.error().code), verified.error().publicMessage);
    }
    const QString payNo = ctx.n.payNo;
    const Channel channel = ctx.n.channel;
    ctx.n = std::move(verified).value();
    if (ctx.n.payNo != payNo || ctx.n.channel != channel)
        return make(Code::Internal, Layer::Rejected, QStringLiteral("stored_delivery_mismatch"),
                    QStringLiteral("the stored delivery is for another payment"));
    return std::nullopt;
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

Result<CallbackReplay> CallbackPipeline::replay(Channel channel, const QString &payNo, bool dryRun,
                                                const SettledInTransaction &audit)
{
    if (!m_options.history)
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("replay needs the callback history"));
    auto stored = m_options.history->newestVerifiedDelivery(channel, payNo);
    if (!stored.ok())
        return stored.error();
    if (!stored.value()) {
        // Its log row outlives the delivery (retention keeps the log longer): the
        // notification was received, only its raw body is gone.
        auto logged = m_options.history->logRowStatus(channel, payNo);
        if (logged.ok() && logged.value())
            return Error::make(ErrorCode::NotFound,
                               QStringLiteral("%1 %2 was received, but its delivery is past retention "
                                              "(retention.deliveries_days): nothing is left to replay")
                                   .arg(channelName(channel), payNo));
        return Error::make(ErrorCode::NotFound,
                           QStringLiteral("no verified delivery is stored for %1 %2").arg(channelName(channel), payNo));
    }
    Context ctx;
    ctx.fromReplay = true;
    ctx.dryRun = dryRun;
    if (!dryRun)
        ctx.audit = audit;
    ctx.sw = switches();
    ctx.n.payNo = payNo;
    ctx.n.channel = channel;
    CallbackReplay out;
    out.deliveryId = *stored.value();
    if (auto failed = loadStored(ctx, out.deliveryId)) {
        out.outcome = *failed;
        out.outcome.payNo = payNo;
        return out;
    }
    out.outcome = process(ctx);
    out.changes = ctx.changes;
    return out;
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

CallbackOutcome CallbackPipeline::process(Context &ctx)
{
    const PaymentNotification &n = ctx.n;

    // The delivery's row, written once: with its decision when that is known already (a
    // rejection, a duplicate the seen set answers: its delivery's only write, left in
    // ctx.deferred for the group commit, and answered once that has committed), else
    // undecided (layer none, status 0), written at once, and decided by finish() once the
    // pipeline has run. The worker, replays and the patrol's settlements write none.
    const bool writesDeliveryRow = !ctx.fromWorker && !ctx.fromGatewayQuery && !ctx.fromReplay;
    auto appendUndecided = [&]() -> std::optional<CallbackOutcome> {
        if (!writesDeliveryRow)
            return std::nullopt;
        auto appended = m_store.appendDelivery(deliveryRecordOf(ctx, std::nullopt));
        if (!appended.ok())
            return unavailable(Layer::None, QStringLiteral("storage"), appended.error().internalMessage);
        ctx.deliveryId = appended.value();
        return std::nullopt;
    };
    auto decidedOnArrival = [&](const CallbackOutcome &decided, bool finishFailure) {
        if (!writesDeliveryRow)
            return finish(ctx, decided);
        ctx.deferred = Context::DeferredRow{deliveryRecordOf(ctx, decided), decided, finishFailure};
        return decided;
    };
    auto reject = [&](Code code, const QString &note, const QString &message) {
        return decidedOnArrival(make(code, Layer::Rejected, note, message), true);
    };

    // A running QA scenario's disable_layers, for its own orders only (qa.enabled only).
    auto applyScenarioSwitches = [&] {
        if (m_options.qaEnabled && m_options.scenarioSwitches) {
            if (const auto scenario = m_options.scenarioSwitches(ctx.order.orderNo))
                ctx.sw = ctx.sw.with(*scenario);
        }
    };
    // The content checks that need no order: our merchant and app, our currency. Empty, or
    // the field that differs.
    auto merchantMismatch = [&]() -> QString {
        const QString &mch = n.channel == Channel::WeChat ? m_options.weChatMchId : m_options.alipaySellerId;
        const QString &app = n.channel == Channel::WeChat ? m_options.weChatAppId : m_options.alipayAppId;
        if (!ctx.fromGatewayQuery && !mch.isEmpty() && n.merchantId != mch)
            return QStringLiteral("merchant");
        if (!ctx.fromGatewayQuery && !app.isEmpty() && !n.appId.isEmpty() && n.appId != app)
            return QStringLiteral("app_id");
        if (n.currency != m_options.currency)
            return QStringLiteral("currency");
        return {};
    };
    // A copy of a payment the seen set remembers `processed` (terminal and durable, so
    // remembering it is safe): one write, its delivery row written with its decision.
    // Its row keeps what tells the copies apart (time, agent, trace, layer) but not its
    // body and headers: the copy names the payment the processed delivery did, and that
    // one's body is kept (a replay uses it).
    auto answerSeen = [&] {
        const CallbackOutcome seen = decidedOnArrival(success(Layer::UniqueIndex, QStringLiteral("seen_processed")),
                                                      false);
        if (ctx.deferred) {
            ctx.deferred->row.rawBody.clear();
            ctx.deferred->row.headers.clear();
        }
        return seen;
    };

    // The seen set first: a copy that names the payment, amount and currency the processed
    // one did, and passes the merchant's own checks, is answered without reading the order
    // (the patrol compares processed payments with their orders). A replay or a query's
    // settlement is an operator's or the patrol's question about the order as it is now:
    // they are checked against it first.
    std::optional<SeenEntry> seenEntry;
    if (!ctx.fromWorker && !ctx.sw.disableUniqueIndex && m_seen) {
        if (auto seen = m_seen->seen(channelName(n.channel), n.payNo); seen.ok() && seen.value().processed)
            seenEntry = seen.value();
        const std::optional<SeenPayment> paid = seenEntry ? seenEntry->payment : std::nullopt;
        if (paid && !ctx.fromReplay && !ctx.fromGatewayQuery && n.paid && paid->paymentNo == n.paymentNo
            && paid->amountFen == n.amountFen && paid->currency == n.currency && merchantMismatch().isEmpty()) {
            ctx.order.orderNo = paid->orderNo;
            applyScenarioSwitches();
            if (!ctx.sw.disableUniqueIndex) {
                if (!hook(CallbackHookPoint::AfterContentChecks, ctx))
                    return make(Code::Internal, Layer::None, QStringLiteral("aborted_by_hook"),
                                QStringLiteral("stopped"));
                return answerSeen();
            }
        }
    }

    // Content checks against the order.
    auto found = m_store.findOrderForPayment(n.paymentNo);
    if (!found.ok())
        return finish(ctx, unavailable(Layer::None, QStringLiteral("storage"), found.error().internalMessage));
    if (!found.value())
        return reject(Code::UnknownOrder, QStringLiteral("unknown_order"),
                      QStringLiteral("no order for %1").arg(n.paymentNo));
    ctx.order = *found.value();
    applyScenarioSwitches();
    if (!n.paid)
        return reject(Code::InvalidNotification, QStringLiteral("not_paid"),
                      QStringLiteral("trade state %1 does not pay").arg(n.tradeState));

    QString mismatch = merchantMismatch();
    if (mismatch.isEmpty() && !ctx.order.currency.isEmpty() && n.currency != ctx.order.currency)
        mismatch = QStringLiteral("currency");
    else if (mismatch.isEmpty() && n.amountFen != ctx.order.amountFen)
        mismatch = QStringLiteral("amount");
    if (!mismatch.isEmpty()) {
        // The findings' kinds are fixed by the contract: a merchant or currency differing
        // from the order is an amount_mismatch whose evidence names the field.
        CallbackFinding finding{QStringLiteral("amount_mismatch"), subjectOf(n.channel, n.payNo), ctx.order.orderNo,
                                n.payNo,
                                QJsonObject{{QStringLiteral("field"), mismatch},
                                            {QStringLiteral("order_amount_fen"), ctx.order.amountFen},
                                            {QStringLiteral("notified_amount_fen"), n.amountFen},
                                            {QStringLiteral("notified_currency"), n.currency},
                                            {QStringLiteral("notified_merchant"), n.merchantId},
                                            {QStringLiteral("notified_app_id"), n.appId}}};
        if (ctx.dryRun) {
            ctx.changes << QStringLiteral("findings: amount_mismatch %1 raised (or seen again)").arg(finding.subject);
        } else if (auto raised = m_store.raiseFinding(finding); !raised.ok()) {
            qCWarning(payonce::lcCore) << "callback: amount_mismatch finding not stored:"
                                       << raised.error().internalMessage;
        } else if (raised.value()) {
            publishFinding(finding);
        }
        return reject(Code::ContentMismatch, QStringLiteral("amount_mismatch"),
                      QStringLiteral("the notification's %1 does not match the order").arg(mismatch));
    }
    if (!hook(CallbackHookPoint::AfterContentChecks, ctx))
        return make(Code::Internal, Layer::None, QStringLiteral("aborted_by_hook"), QStringLiteral("stopped"));

    // Seen processed but not answered above (its content not kept, or the scenario's
    // switches): the order's checks have passed, the seen set answers now.
    if (!ctx.fromWorker && !ctx.sw.disableUniqueIndex && seenEntry)
        return answerSeen();

    // One commit for the delivery row, the log row and the paid transaction, when the
    // pay lock is free; otherwise (nothing written) the accepted-first path below.
    if (oneCommitApplies(ctx)) {
        if (auto settled = settleInOneCommit(ctx))
            return finish(ctx, *settled);
    }

    if (auto failed = appendUndecided())
        return *failed;

    if (!ctx.fromWorker && !ctx.sw.disableUniqueIndex) {
        if (ctx.fromReplay) {
            if (auto ended = replayLogRow(ctx))
                return finish(ctx, *ended);
            return finish(ctx, settle(ctx));
        }
        // L4, durable before anything else happens.
        auto inserted = m_store.insertAccepted(AcceptedCallback{n.channel, n.payNo, ctx.order.orderNo, n.amountFen,
                                                                ctx.deliveryId, m_clock.nowMs(), n.paymentNo});
        if (!inserted.ok())
            return finish(ctx, unavailable(Layer::None, QStringLiteral("storage"), inserted.error().internalMessage));
        if (inserted.value() == LogInsert::Duplicate && !ctx.fromGatewayQuery) {
            // A row the patrol or the closer wrote from the platform's query has no delivery
            // and may never have been settled (its lock was busy): this delivery becomes the
            // row's and settles it, as if it had inserted the row. Any other row is durable
            // and owned by whoever wrote it (or the worker).
            auto attached = ctx.deliveryId ? m_store.attachDelivery(n.channel, n.payNo, *ctx.deliveryId)
                                           : Result<bool>(false);
            if (!attached.ok())
                return finish(ctx,
                              unavailable(Layer::None, QStringLiteral("storage"), attached.error().internalMessage));
            if (!attached.value())
                return finish(ctx, success(Layer::UniqueIndex, QStringLiteral("log_row_exists")));
        }
        ctx.durable = true;
        if (!hook(CallbackHookPoint::AfterLogRowDurable, ctx))
            return make(Code::Internal, Layer::None, QStringLiteral("aborted_by_hook"), QStringLiteral("stopped"));
        if (currentMode() == CallbackMode::AcceptOnly)
            return finish(ctx, success(Layer::None, QStringLiteral("accept_only")));
    }
    return finish(ctx, settle(ctx));
}

std::optional<CallbackOutcome> CallbackPipeline::replayLogRow(Context &ctx)
{
    // L4 for a replay: a processed row ends it like any duplicate; an accepted row is
    // finished (as the worker would); a missing one is made durable first.
    const PaymentNotification &n = ctx.n;
    auto status = m_options.history->logRowStatus(n.channel, n.payNo);
    if (!status.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), status.error().internalMessage);
    if (status.value() == LogRowStatus::Processed)
        return success(Layer::UniqueIndex, QStringLiteral("log_row_exists"));
    ctx.durable = true;
    if (status.value())
        return std::nullopt;
    if (ctx.dryRun) {
        ctx.changes
            << QStringLiteral("pay_callback_log: %1 %2 inserted as accepted").arg(channelName(n.channel), n.payNo);
        return std::nullopt;
    }
    // Inserted, or a row that appeared meanwhile: either way the CAS and the keys decide.
    auto inserted = m_store.insertAccepted(AcceptedCallback{n.channel, n.payNo, ctx.order.orderNo, n.amountFen,
                                                            std::nullopt, m_clock.nowMs(), n.paymentNo});
    if (!inserted.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), inserted.error().internalMessage);
    return std::nullopt;
}

CallbackOutcome CallbackPipeline::predictSettle(Context &ctx) const
{
    // What settle() decides, from the order as read at the content checks: the CAS
    // PENDING|PAYING -> PAID wins, or it is lost to this pay_no or to another one.
    const CallbackOrder &order = ctx.order;
    const PaymentNotification &n = ctx.n;
    const QString processed =
        QStringLiteral("pay_callback_log: %1 %2 accepted -> processed").arg(channelName(n.channel), n.payNo);
    if (order.status != OrderStatus::Pending && order.status != OrderStatus::Paying) {
        if (paidBy(order, n.payNo)) {
            ctx.changes << processed;
            return success(Layer::StateMachine, QStringLiteral("already_paid"));
        }
        ctx.changes
            << QStringLiteral("findings: double_payment %1 raised (or seen again)").arg(subjectOf(n.channel, n.payNo))
            << processed;
        return success(Layer::StateMachine, QStringLiteral("double_payment"));
    }
    ctx.changes << QStringLiteral("orders: %1 %2 -> PAID (pay_no %3)")
                       .arg(order.orderNo, orderStatusName(order.status), n.payNo);
    for (const CallbackOrder::Item &item : order.items)
        ctx.changes << QStringLiteral(
                           "skus: %1 stock -%2 and stock_log (%3, %1, take), or an oversold finding when short")
                           .arg(item.skuId)
                           .arg(item.qty)
                           .arg(order.orderNo);
    if (!order.rewardCouponTemplate.isEmpty())
        ctx.changes << QStringLiteral("user_coupon: (%1, %2)").arg(order.orderNo, order.rewardCouponTemplate);
    if (order.rewardPoints > 0)
        ctx.changes << QStringLiteral("point_log: (%1, reward) +%2").arg(order.orderNo).arg(order.rewardPoints);
    ctx.changes << QStringLiteral("outbox: order.paid:%1").arg(order.orderNo)
                << QStringLiteral("payments: %1 -> paid").arg(n.paymentNo) << processed;
    return success(Layer::None, QStringLiteral("processed"));
}

CallbackOutcome CallbackPipeline::settle(Context &ctx)
{
    if (ctx.dryRun)
        return predictSettle(ctx);
    const PaymentNotification &n = ctx.n;
    const QString orderNo = ctx.order.orderNo;

    // L3: the pay lock, with the order's fencing token taken in the same step.
    std::unique_ptr<LockHandle> lock;
    bool keyStoreUnreachable = false;
    if (!ctx.sw.disableLock) {
        const auto deadline = std::chrono::steady_clock::now() + m_options.lockWait;
        for (;;) {
            auto acquired = m_locks.acquire(QStringLiteral("lock:pay:") + n.payNo, m_options.lockTtl, orderNo);
            if (!acquired.ok()) {
                if (qint64 heldBack = 0; m_lockUnavailableLog.admit(m_clock.nowMs(), &heldBack))
                    qCWarning(payonce::lcCore).noquote()
                        << "callback: L3 unavailable (key store degraded), L4/L5 decide:"
                        << acquired.error().internalMessage
                        << QStringLiteral("(%1 more since the last such line)").arg(heldBack);
                keyStoreUnreachable = true;
                break;
            }
            if (acquired.value()) {
                lock = std::move(acquired).value();
                break;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                // Rule 8: SUCCESS only when a durable row backs it (its holder or the worker
                // finishes that row); otherwise the platform must try again.
                if (ctx.durable)
                    return success(Layer::Lock, QStringLiteral("lock_busy_durable"));
                return make(Code::Unavailable, Layer::Lock, QStringLiteral("lock_busy"),
                            QStringLiteral("this payment is being processed; retry"));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    if (lock)
        event(QStringLiteral("lock"));
    const std::optional<qint64> fence = lock ? std::optional<qint64>(qint64(lock->fencingToken())) : std::nullopt;
    if (!hook(CallbackHookPoint::AfterLockBeforeBegin, ctx, lock.get())) {
        // As if the process died: the lease simply runs out (no release).
        if (lock)
            lock->stopRenewingForTest();
        (void)lock.release(); // the handle is leaked on purpose: a dead process releases nothing
        return make(Code::Internal, Layer::None, QStringLiteral("aborted_by_hook"), QStringLiteral("stopped"));
    }

    const bool stateMachine = !ctx.sw.disableStateMachine;
    const QString key = ctx.sw.disableSideEffect ? QStringLiteral("#") + nonce() : QString();
    bool unlocked = false;
    auto unlock = [&] {
        if (lock && !unlocked) {
            unlocked = true;
            (void)lock->release();
            event(QStringLiteral("unlock"));
        }
    };

    std::optional<CallbackOutcome> decided;
    bool staleFence = false;
    PaidEffectsWritten written; // its findings published, its keys counted, once committed
    const Error rollback = Error::make(ErrorCode::Conflict, QStringLiteral("callback decided inside the transaction"));
    auto committed = m_store.inTransaction([&](CallbackTransaction &tx) -> Result<void> {
        decided.reset();
        staleFence = false;
        written = {};
        event(QStringLiteral("begin"));

        Result<TransitionOutcome> moved = TransitionOutcome::Lost;
        if (stateMachine) {
            moved = tx.markPaid(orderNo, n.payNo, n.channel, fence);
        } else {
            // QA's classic race: the decision was made on the read of the content checks.
            const OrderStatus seen = ctx.order.status;
            if (seen == OrderStatus::Pending || seen == OrderStatus::Paying)
                moved = tx.forcePaid(orderNo, n.payNo, n.channel, fence);
        }
        if (!moved.ok())
            return moved.error();

        switch (moved.value()) {
        case TransitionOutcome::Transitioned: break;
        case TransitionOutcome::NotFound:
            decided = make(Code::UnknownOrder, Layer::Rejected, QStringLiteral("unknown_order"),
                           QStringLiteral("the order vanished"));
            return rollback;
        case TransitionOutcome::StaleFence:
            staleFence = true;
            decided = ctx.durable ? success(Layer::Lock, QStringLiteral("stale_fence"))
                                  : make(Code::Unavailable, Layer::Lock, QStringLiteral("stale_fence"),
                                         QStringLiteral("a newer holder owns this order; retry"));
            return rollback;
        case TransitionOutcome::Lost: {
            // Somebody else made a transition: which one decides the answer (rule 2).
            auto lost = lostCasOutcome(tx, orderNo, n, written.newFindings);
            if (!lost.ok())
                return lost.error();
            const QString outcome = lost.value();
            if (ctx.durable) {
                auto marked = tx.markProcessed(n.channel, n.payNo, outcome);
                if (!marked.ok())
                    return marked.error();
            }
            decided = success(Layer::StateMachine, outcome);
            if (ctx.audit) {
                if (auto audited = ctx.audit(*decided); !audited.ok())
                    return audited.error();
            }
            return {}; // commit: the finding and the processed row are the outcome
        }
        }

        // The order is PAID by us: its log row processed, then every effect on its own key,
        // the hot stock rows last (writePaidEffects).
        if (ctx.durable) {
            auto marked = tx.markProcessed(n.channel, n.payNo, QStringLiteral("processed"));
            if (!marked.ok())
                return marked.error();
        }
        if (auto wrote = writePaidEffects(tx, ctx.order, n, fence.value_or(0), key, ctx.raw.traceId, written);
            !wrote.ok())
            return wrote.error();
        // A lease we can no longer rely on must not COMMIT.
        if (lock && lock->lost()) {
            decided = ctx.durable ? success(Layer::Lock, QStringLiteral("lock_lost"))
                                  : make(Code::Unavailable, Layer::Lock, QStringLiteral("lock_lost"),
                                         QStringLiteral("the payment lock was lost; retry"));
            return rollback;
        }
        if (ctx.sw.unlockBeforeCommit) {
            // Test only: the classic ghost (`finally { unlock }` before the proxy commits).
            unlock();
            if (!hook(CallbackHookPoint::BetweenUnlockAndCommit, ctx))
                return Error::make(ErrorCode::Internal, QStringLiteral("stopped by the test hook"));
        }
        if (ctx.audit) {
            if (auto audited = ctx.audit(success(Layer::None, QStringLiteral("processed"))); !audited.ok())
                return audited.error();
        }
        return {};
    });

    event(committed.ok() ? QStringLiteral("commit") : QStringLiteral("rollback"));
    // COMMIT (or rollback) is behind us: only now the lock goes (docs/design.md rule 1).
    unlock();
    (void)hook(CallbackHookPoint::AfterUnlock, ctx);

    if (staleFence)
        reportStaleFence(orderNo, n.payNo, fence.value_or(0));
    if (committed.ok()) {
        m_byLayer[std::size_t(Layer::SideEffect)].fetch_add(written.keysFoundTaken);
        for (const CallbackFinding &finding : std::as_const(written.newFindings))
            publishFinding(finding);
        // No decision inside the transaction: this delivery paid the order.
        if (keyStoreUnreachable && !decided)
            m_unfenced.fetch_add(1);
    }
    if (committed.ok() && m_seen && !ctx.sw.disableUniqueIndex)
        (void)m_seen->markProcessed(channelName(n.channel), n.payNo,
                                    SeenPayment{orderNo, n.paymentNo, n.amountFen, n.currency});
    // A decision made inside the transaction stands when it rolled back on purpose, or when
    // its commit (a lost CAS: processed row, finding) went through.
    if (decided && (committed.ok() || committed.error().internalMessage == rollback.internalMessage))
        return *decided;
    if (!committed.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), committed.error().internalMessage);
    return success(Layer::None, QStringLiteral("processed"));
}

CallbackWorker::CallbackWorker(CallbackPipeline &pipeline, CallbackStore &store, CallbackModeStore &modes,
                               const Clock &clock, qint64 minAgeMs)
    : m_pipeline(pipeline), m_store(store), m_modes(modes), m_clock(clock), m_minAgeMs(minAgeMs)
{
}

CallbackWorker::Report CallbackWorker::runOnce(int limit)
{
    Report report;
    auto mode = m_modes.mode();
    if (!mode.ok()) {
        qCWarning(payonce::lcCore) << "callback worker: mode not readable:" << mode.error().internalMessage;
        return report;
    }
    report.modeRead = true;
    if (mode.value().mode == CallbackMode::AcceptOnly) {
        report.acceptOnly = true;
        return report;
    }
    auto rows = m_store.listAccepted(m_clock.nowMs() - m_minAgeMs, limit);
    if (!rows.ok()) {
        qCWarning(payonce::lcCore) << "callback worker: accepted rows not readable:" << rows.error().internalMessage;
        return report;
    }
    for (const AcceptedCallback &row : rows.value()) {
        ++report.seen;
        CallbackOutcome out;
        if (row.deliveryId) {
            out = m_pipeline.finishAccepted(row);
        } else if (auto settled = settleByQuery(row)) {
            ++report.byQuery;
            out = *settled;
        } else {
            ++report.failed;
            continue;
        }
        if (out.success() && out.note == QLatin1String("stale_fence")) {
            // Answered SUCCESS to the platform, but nothing was written: the row is not done.
            ++report.failed;
            ++report.staleFence;
            staleFenceRefused(row);
        } else if (out.success() && leavesTheRowAccepted(out)) {
            // Its lock is held elsewhere (or was lost before COMMIT), or accept-only began:
            // the row is still `accepted`, the next run tries again.
            ++report.failed;
            ++report.busy;
        } else if (out.success()) {
            ++report.finished;
            std::lock_guard guard(m_mutex);
            m_staleTries.remove(channelName(row.channel) + QLatin1Char(':') + row.payNo);
        } else {
            ++report.failed;
            qCWarning(payonce::lcCore) << "callback worker:" << row.payNo
                                       << "not finished:" << callbackOutcomeName(out.code) << out.note << out.message;
        }
    }
    if (rows.value().size() < limit) {
        // Every accepted row was listed: a row not among them is no longer accepted
        // (finished elsewhere), its refusals are history.
        QSet<QString> listed;
        for (const AcceptedCallback &row : rows.value())
            listed.insert(channelName(row.channel) + QLatin1Char(':') + row.payNo);
        std::lock_guard guard(m_mutex);
        m_staleTries.removeIf([&](const auto &entry) { return !listed.contains(entry.key()); });
    }
    return report;
}

bool CallbackWorker::leavesTheRowAccepted(const CallbackOutcome &outcome)
{
    // The SUCCESS answers that a durable row backs without having settled it (rule 8).
    return outcome.note == QLatin1String("lock_busy_durable") || outcome.note == QLatin1String("lock_lost")
           || outcome.note == QLatin1String("stale_fence") || outcome.note == QLatin1String("accept_only");
}

std::optional<CallbackOutcome> CallbackWorker::settleByQuery(const AcceptedCallback &row)
{
    // The row was written from the platform's query (the patrol, the closer) and has no
    // delivery to verify again: the platform is asked again, and a trade it still reports
    // paid by this pay_no is settled whatever the order's status (PAID by another pay_no or
    // CLOSED: a double payment, acknowledged with its finding).
    PaymentGateway *gateway = m_gateways ? m_gateways(row.channel) : nullptr;
    if (!gateway || row.paymentNo.isEmpty()) {
        qCWarning(payonce::lcCore) << "callback worker:" << row.payNo << "has no delivery and"
                                   << (gateway ? "no payment number to query" : "no gateway to query")
                                   << "; left to the patrol";
        return std::nullopt;
    }
    auto trade = gateway->query(row.paymentNo);
    if (!trade.ok()) {
        qCWarning(payonce::lcCore) << "callback worker: query of" << row.paymentNo << "for" << row.payNo
                                   << "failed:" << trade.error().internalMessage;
        return std::nullopt;
    }
    if (trade.value().state != GatewayTradeState::Paid || trade.value().payNo != row.payNo) {
        qCWarning(payonce::lcCore) << "callback worker:" << row.paymentNo << "is" << tradeStateName(trade.value().state)
                                   << "by" << trade.value().payNo << "at the platform, the row says paid by"
                                   << row.payNo << "; left to the patrol";
        return std::nullopt;
    }
    return m_pipeline.settleConfirmed(confirmedByQuery(row.channel, row.paymentNo, trade.value()), {});
}

void CallbackWorker::staleFenceRefused(const AcceptedCallback &row)
{
    const QString subject = channelName(row.channel) + QLatin1Char(':') + row.payNo;
    int tries = 0;
    {
        std::lock_guard guard(m_mutex);
        tries = ++m_staleTries[subject];
    }
    qCWarning(payonce::lcCore) << "callback worker:" << row.payNo << "refused as a stale fence" << tries << "time(s)";
    if (tries < StaleFenceTriesBeforeFinding)
        return;
    const CallbackFinding finding{QStringLiteral("stuck_accepted"), subject, row.orderNo, row.payNo,
                                  QJsonObject{{QStringLiteral("reason"), QStringLiteral("stale_fence")},
                                              {QStringLiteral("stale_fence_tries"), tries},
                                              {QStringLiteral("has_delivery"), true},
                                              {QStringLiteral("accepted_at_ms"), row.createdAtMs},
                                              {QStringLiteral("proposal"),
                                               QStringLiteral("the order carries a fencing token above the key "
                                                              "store's: check fence_epochs and the Redis fence state, "
                                                              "then replay")}}};
    if (auto raised = m_store.raiseFinding(finding); !raised.ok())
        qCWarning(payonce::lcCore) << "callback worker: finding for" << row.payNo
                                   << "not raised:" << raised.error().internalMessage;
}

} // namespace payonce::core
