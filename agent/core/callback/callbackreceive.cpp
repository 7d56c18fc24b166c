// A verified notification's way to its settlement (docs/design.md, "Callback path"): the
// seen set, the content checks against the order, then one commit or the accepted-first
// log row (L4) before the paid transaction.
#include "core/callback/callbackpipelinecontext.h"

#include "core/ports/clock.h"
#include "core/ports/idempotencycache.h"

#include "logging/categories.h"

#include <QJsonObject>

namespace payonce::core {

using namespace callbackpath;
using Code = CallbackOutcomeCode;

CallbackOutcome CallbackPipeline::process(Context &ctx)
{
    if (auto answered = answerFromSeenSet(ctx))
        return *answered;
    if (auto refused = checkContent(ctx))
        return *refused;

    // Seen processed but not answered before the order was read (its content not kept, or
    // the scenario's switches): the order's checks have passed, the seen set answers now.
    if (!ctx.fromWorker && !ctx.sw.disableUniqueIndex && ctx.seenProcessed)
        return answerSeen(ctx);

    // One commit for the delivery row, the log row and the paid transaction, when the
    // pay lock is free; otherwise (nothing written) the accepted-first path below.
    if (oneCommitApplies(ctx)) {
        if (auto settled = settleInOneCommit(ctx))
            return finish(ctx, *settled);
    }

    if (auto failed = appendUndecided(ctx))
        return *failed;
    if (!ctx.fromWorker && !ctx.sw.disableUniqueIndex) {
        if (ctx.fromReplay) {
            if (auto ended = replayLogRow(ctx))
                return finish(ctx, *ended);
            return finish(ctx, settle(ctx));
        }
        if (auto ended = acceptDurably(ctx))
            return *ended;
    }
    return finish(ctx, settle(ctx));
}

bool CallbackPipeline::writesDeliveryRow(const Context &ctx) const
{
    // The worker, replays and the patrol's settlements write none: their delivery is
    // stored already, or there is none.
    return !ctx.fromWorker && !ctx.fromGatewayQuery && !ctx.fromReplay;
}

std::optional<CallbackOutcome> CallbackPipeline::appendUndecided(Context &ctx)
{
    // The delivery's row, written once: undecided (layer none, status 0) when its decision is
    // not known on arrival, decided by finish() once the pipeline has run.
    if (!writesDeliveryRow(ctx))
        return std::nullopt;
    auto appended = m_store.appendDelivery(deliveryRecordOf(ctx, std::nullopt));
    if (!appended.ok())
        return unavailable(Layer::None, QStringLiteral("storage"), appended.error().internalMessage);
    ctx.deliveryId = appended.value();
    return std::nullopt;
}

CallbackOutcome CallbackPipeline::decidedOnArrival(Context &ctx, const CallbackOutcome &decided, bool finishFailure)
{
    // A rejection, a duplicate the seen set answers: the delivery's only write, its row with
    // its decision, left in ctx.deferred for the group commit and answered once that has
    // committed.
    if (!writesDeliveryRow(ctx))
        return finish(ctx, decided);
    ctx.deferred = Context::DeferredRow{deliveryRecordOf(ctx, decided), decided, finishFailure};
    return decided;
}

CallbackOutcome CallbackPipeline::answerSeen(Context &ctx)
{
    // A copy of a payment the seen set remembers `processed` (terminal and durable, so
    // remembering it is safe): one write, its delivery row written with its decision. Its
    // row keeps what tells the copies apart (time, agent, trace, layer) but not its body and
    // headers: the copy names the payment the processed delivery did, and that one's body
    // is kept (a replay uses it).
    const CallbackOutcome seen = decidedOnArrival(ctx, success(Layer::UniqueIndex, QStringLiteral("seen_processed")),
                                                  false);
    if (ctx.deferred) {
        ctx.deferred->row.rawBody.clear();
        ctx.deferred->row.headers.clear();
    }
    return seen;
}

void CallbackPipeline::applyScenarioSwitches(Context &ctx) const
{
    // A running QA scenario's disable_layers, for its own orders only (qa.enabled only).
    if (!m_options.qaEnabled || !m_options.scenarioSwitches)
        return;
    if (const auto scenario = m_options.scenarioSwitches(ctx.order.orderNo))
        ctx.sw = ctx.sw.with(*scenario);
}

QString CallbackPipeline::merchantMismatch(const Context &ctx) const
{
    // The content checks that need no order: our merchant and app, our currency. Empty, or
    // the field that differs.
    const PaymentNotification &n = ctx.n;
    const QString &mch = n.channel == Channel::WeChat ? m_options.weChatMchId : m_options.alipaySellerId;
    const QString &app = n.channel == Channel::WeChat ? m_options.weChatAppId : m_options.alipayAppId;
    if (!ctx.fromGatewayQuery && !mch.isEmpty() && n.merchantId != mch)
        return QStringLiteral("merchant");
    if (!ctx.fromGatewayQuery && !app.isEmpty() && !n.appId.isEmpty() && n.appId != app)
        return QStringLiteral("app_id");
    if (n.currency != m_options.currency)
        return QStringLiteral("currency");
    return {};
}

std::optional<CallbackOutcome> CallbackPipeline::answerFromSeenSet(Context &ctx)
{
    // The seen set first: a copy that names the payment, amount and currency the processed
    // one did, and passes the merchant's own checks, is answered without reading the order
    // (the patrol compares processed payments with their orders). A replay or a query's
    // settlement is an operator's or the patrol's question about the order as it is now:
    // they are checked against it first.
    const PaymentNotification &n = ctx.n;
    if (ctx.fromWorker || ctx.sw.disableUniqueIndex || !m_seen)
        return std::nullopt;
    auto seen = m_seen->seen(channelName(n.channel), n.payNo);
    if (!seen.ok() || !seen.value().processed)
        return std::nullopt;
    ctx.seenProcessed = true;
    if (!seenCopyMatches(ctx, seen.value()))
        return std::nullopt;
    applyScenarioSwitches(ctx);
    if (ctx.sw.disableUniqueIndex)
        return std::nullopt;
    if (!hook(CallbackHookPoint::AfterContentChecks, ctx))
        return abortedByHook();
    return answerSeen(ctx);
}

bool CallbackPipeline::seenCopyMatches(Context &ctx, const SeenEntry &entry) const
{
    // The copy names the payment, amount and currency the processed one did (whose order
    // it then names), is paid, and passes our merchant, app and currency checks.
    const PaymentNotification &n = ctx.n;
    const std::optional<SeenPayment> &paid = entry.payment;
    if (!paid || ctx.fromReplay || ctx.fromGatewayQuery || !n.paid || paid->paymentNo != n.paymentNo
        || paid->amountFen != n.amountFen || paid->currency != n.currency || !merchantMismatch(ctx).isEmpty())
        return false;
    ctx.order.orderNo = paid->orderNo;
    return true;
}

std::optional<CallbackOutcome> CallbackPipeline::checkContent(Context &ctx)
{
    // Content checks against the order.
    const PaymentNotification &n = ctx.n;
    auto reject = [&](Code code, const QString &note, const QString &message) {
        return decidedOnArrival(ctx, make(code, Layer::Rejected, note, message), true);
    };
    auto found = m_store.findOrderForPayment(n.paymentNo);
    if (!found.ok())
        return finish(ctx, unavailable(Layer::None, QStringLiteral("storage"), found.error().internalMessage));
    if (!found.value())
        return reject(Code::UnknownOrder, QStringLiteral("unknown_order"),
                      QStringLiteral("no order for %1").arg(n.paymentNo));
    ctx.order = *found.value();
    applyScenarioSwitches(ctx);
    if (!n.paid)
        return reject(Code::InvalidNotification, QStringLiteral("not_paid"),
                      QStringLiteral("trade state %1 does not pay").arg(n.tradeState));

    QString mismatch = merchantMismatch(ctx);
    if (mismatch.isEmpty() && !ctx.order.currency.isEmpty() && n.currency != ctx.order.currency)
        mismatch = QStringLiteral("currency");
    else if (mismatch.isEmpty() && n.amountFen != ctx.order.amountFen)
        mismatch = QStringLiteral("amount");
    if (!mismatch.isEmpty())
        return refuseMismatch(ctx, mismatch);
    if (!hook(CallbackHookPoint::AfterContentChecks, ctx))
        return abortedByHook();
    return std::nullopt;
}

CallbackOutcome CallbackPipeline::refuseMismatch(Context &ctx, const QString &field)
{
    // The findings' kinds are fixed by the contract: a merchant or currency differing from
    // the order is an amount_mismatch whose evidence names the field.
    const PaymentNotification &n = ctx.n;
    CallbackFinding finding{QStringLiteral("amount_mismatch"), subjectOf(n.channel, n.payNo), ctx.order.orderNo,
                            n.payNo,
                            QJsonObject{{QStringLiteral("field"), field},
                                        {QStringLiteral("order_amount_fen"), ctx.order.amountFen},
                                        {QStringLiteral("notified_amount_fen"), n.amountFen},
                                        {QStringLiteral("notified_currency"), n.currency},
                                        {QStringLiteral("notified_merchant"), n.merchantId},
                                        {QStringLiteral("notified_app_id"), n.appId}}};
    if (ctx.dryRun) {
        ctx.changes << QStringLiteral("findings: amount_mismatch %1 raised (or seen again)").arg(finding.subject);
    } else if (auto raised = m_store.raiseFinding(finding); !raised.ok()) {
        qCWarning(payonce::lcCore) << "callback: amount_mismatch finding not stored:" << raised.error().internalMessage;
    } else if (raised.value()) {
        publishFinding(finding);
    }
    return decidedOnArrival(ctx,
                            make(Code::ContentMismatch, Layer::Rejected, QStringLiteral("amount_mismatch"),
                                 QStringLiteral("the notification's %1 does not match the order").arg(field)),
                            true);
}

std::optional<CallbackOutcome> CallbackPipeline::acceptDurably(Context &ctx)
{
    // L4, durable before anything else happens.
    const PaymentNotification &n = ctx.n;
    auto inserted = m_store.insertAccepted(AcceptedCallback{n.channel, n.payNo, ctx.order.orderNo, n.amountFen,
                                                            ctx.deliveryId, m_clock.nowMs(), n.paymentNo});
    if (!inserted.ok())
        return finish(ctx, unavailable(Layer::None, QStringLiteral("storage"), inserted.error().internalMessage));
    if (inserted.value() == LogInsert::Duplicate && !ctx.fromGatewayQuery) {
        // A row the patrol or the closer wrote from the platform's query has no delivery and
        // may never have been settled (its lock was busy): this delivery becomes the row's
        // and settles it, as if it had inserted the row. Any other row is durable and owned
        // by whoever wrote it (or the worker).
        auto attached = ctx.deliveryId ? m_store.attachDelivery(n.channel, n.payNo, *ctx.deliveryId)
                                       : Result<bool>(false);
        if (!attached.ok())
            return finish(ctx, unavailable(Layer::None, QStringLiteral("storage"), attached.error().internalMessage));
        if (!attached.value())
            return finish(ctx, success(Layer::UniqueIndex, QStringLiteral("log_row_exists")));
    }
    ctx.durable = true;
    if (!hook(CallbackHookPoint::AfterLogRowDurable, ctx))
        return abortedByHook();
    if (currentMode() == CallbackMode::AcceptOnly)
        return finish(ctx, success(Layer::None, QStringLiteral("accept_only")));
    return std::nullopt;
}

} // namespace payonce::core
