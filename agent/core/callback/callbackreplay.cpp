// The operator's replay of a stored delivery (docs/openapi.yaml, POST
// /api/v1/callbacks/{channel}/{pay_no}/replay), and the worker's reload of one: the stored
// raw delivery verified again, its log row's state, and the dry run's prediction.
#include "core/callback/callbackpipelinecontext.h"

#include "core/ports/callbackhistory.h"
#include "core/ports/clock.h"
#include "core/ports/notificationverifier.h"

namespace payonce::core {

using namespace callbackpath;
using Code = CallbackOutcomeCode;

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

} // namespace payonce::core
