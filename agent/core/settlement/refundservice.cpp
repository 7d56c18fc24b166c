#include "core/settlement/refundservice.h"

#include "core/ports/clock.h"
#include "core/ports/paymentgateway.h"

#include "logging/categories.h"

namespace payonce::core {

namespace {

const QString kActor = QStringLiteral("system:refunds");
// Longer than a refund call with its retries can take behind the resilient gateway.
constexpr qint64 kSendLeaseMs = 60 * 1000;

bool outcomeUnknown(const Error &error)
{
    return error.code == ErrorCode::Unavailable || error.code == ErrorCode::BadSignature;
}

QString stateName(GatewayRefundState state)
{
    switch (state) {
    case GatewayRefundState::NotFound: return QStringLiteral("not_found");
    case GatewayRefundState::Processing: return QStringLiteral("processing");
    case GatewayRefundState::Success: return QStringLiteral("success");
    case GatewayRefundState::Closed: return QStringLiteral("closed");
    case GatewayRefundState::Abnormal: return QStringLiteral("abnormal");
    }
    return QStringLiteral("unknown");
}

Error unknownRefund(const QString &refundNo)
{
    return Error::make(ErrorCode::NotFound, QStringLiteral("no refund %1").arg(refundNo));
}

} // namespace

RefundService::RefundService(RefundStore &store, GatewayLookup gateways, const Clock &clock,
                             RefundServiceOptions options)
    : m_store(store), m_gateways(std::move(gateways)), m_clock(clock), m_options(std::move(options))
{
}

Result<RefundSettlement> RefundService::applyFailure(const RefundRecord &refund, const QString &why)
{
    qCWarning(payonce::lcCore).noquote() << QStringLiteral("refund %1 failed: %2").arg(refund.refundNo, why);
    return m_store.settleFailed(refund.refundNo, why, kActor, m_clock.nowMs());
}

Result<RefundRecord> RefundService::submit(const QString &refundNo)
{
    auto found = m_store.find(refundNo);
    if (!found)
        return found.error();
    if (!found.value())
        return unknownRefund(refundNo);
    const RefundRecord refund = *found.value();
    if (refund.status != RefundStatus::Requested)
        return refund; // with the platform already, or settled
    // One sender at a time: a second approval, or the follow-up, sends nothing while this
    // one is out (the same refund number would be harmless at the platform, but one call
    // is what the operator was promised).
    auto claimed = m_store.claimSubmission(refundNo, m_clock.nowMs(), kSendLeaseMs);
    if (!claimed)
        return claimed.error();
    if (!claimed.value())
        return refund;

    PaymentGateway *gateway = m_gateways ? m_gateways(refund.channel) : nullptr;
    if (!gateway) {
        const QString why = QStringLiteral("no gateway for %1").arg(channelName(refund.channel));
        if (auto noted = m_store.recordAttempt(refundNo, false, {}, why, m_clock.nowMs()); !noted)
            return noted.error();
        return Error::make(ErrorCode::Unavailable, why, QStringLiteral("payment channel not available"));
    }
    GatewayRefundRequest request;
    request.paymentNo = refund.paymentNo;
    request.payNo = refund.payNo;
    request.refundNo = refund.refundNo;
    request.amountFen = refund.amountFen;
    request.totalFen = refund.totalFen;
    request.reason = QStringLiteral("refund %1").arg(refund.refundNo);
    request.notifyUrl = refund.channel == Channel::WeChat ? m_options.notifyUrlWeChat : m_options.notifyUrlAlipay;
    auto answer = gateway->refund(request);
    const qint64 now = m_clock.nowMs();
    if (auto recorded = answer ? recordMade(refund, answer.value(), now) : recordRefusal(refund, answer.error(), now);
        !recorded)
        return recorded.error();
    auto after = m_store.find(refundNo);
    if (!after)
        return after.error();
    if (!after.value())
        return unknownRefund(refundNo);
    return *after.value();
}

/// The platform did not make the refund: unknown (sent again later) or refused (failed).
Result<void> RefundService::recordRefusal(const RefundRecord &refund, const Error &error, qint64 now)
{
    const QString &refundNo = refund.refundNo;
    if (outcomeUnknown(error)) {
        // Maybe made, maybe not: the same refund number later is safe either way.
        if (auto noted = m_store.recordAttempt(refundNo, false, {}, error.internalMessage, now); !noted)
            return noted.error();
    } else if (auto failed = applyFailure(refund,
                                          QStringLiteral("refused by the platform: %1").arg(error.internalMessage));
               !failed) {
        return failed.error();
    }
    return {};
}

/// The platform's answer to a refund it took: processing, settled, closed, abnormal or unknown to it.
Result<void> RefundService::recordMade(const RefundRecord &refund, const GatewayRefund &made, qint64 now)
{
    const QString &refundNo = refund.refundNo;
    switch (made.state) {
    case GatewayRefundState::Processing:
    case GatewayRefundState::Success:
        if (auto noted = m_store.recordAttempt(refundNo, true, made.refundId, {}, now); !noted)
            return noted.error();
        if (made.state == GatewayRefundState::Success) {
            auto settled = m_store.settleSucceeded(refundNo, made.refundId, kActor,
                                                   QStringLiteral("the platform answered the refund: success"), now);
            if (!settled)
                return settled.error();
        }
        break;
    case GatewayRefundState::Closed:
        if (auto failed = applyFailure(refund, QStringLiteral("the platform answered %1").arg(stateName(made.state)));
            !failed)
            return failed.error();
        break;
    case GatewayRefundState::Abnormal:
        // Accepted, then stuck at the platform: it stays open for SUCCESS or CLOSED.
        if (auto noted = m_store.recordAttempt(refundNo, true, made.refundId, {}, now); !noted)
            return noted.error();
        if (auto abnormal = m_store.noteAbnormal(refundNo, QStringLiteral("the platform answered abnormal"), kActor,
                                                 now);
            !abnormal)
            return abnormal.error();
        break;
    case GatewayRefundState::NotFound:
        if (auto noted = m_store.recordAttempt(refundNo, false, {}, QStringLiteral("the platform answered not_found"),
                                               now);
            !noted)
            return noted.error();
        break;
    }
    return {};
}

Result<RefundSettlement> RefundService::settle(const RefundNotification &n)
{
    auto found = m_store.find(n.refundNo);
    if (!found)
        return found.error();
    if (!found.value())
        return RefundSettlement::Unknown;
    const RefundRecord &refund = *found.value();
    QString mismatch;
    if (n.channel != refund.channel)
        mismatch = QStringLiteral("channel");
    else if (!n.paymentNo.isEmpty() && n.paymentNo != refund.paymentNo)
        mismatch = QStringLiteral("out_trade_no");
    else if (!n.payNo.isEmpty() && n.payNo != refund.payNo)
        mismatch = QStringLiteral("pay_no");
    else if (n.amountFen && *n.amountFen != refund.amountFen)
        mismatch = QStringLiteral("amount");
    else if (n.refundedTotalFen && *n.refundedTotalFen < refund.amountFen)
        mismatch = QStringLiteral("refunded total");
    if (!mismatch.isEmpty()) {
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("refund notification for %1 does not match it: %2").arg(n.refundNo, mismatch),
                           QStringLiteral("the notification does not match the refund"));
    }
    const qint64 now = m_clock.nowMs();
    const QString why = QStringLiteral("the platform's refund notification: %1").arg(n.refundStatus);
    switch (n.state) {
    case RefundNotification::State::Success: return m_store.settleSucceeded(n.refundNo, n.refundId, kActor, why, now);
    case RefundNotification::State::Closed: return m_store.settleFailed(n.refundNo, why, kActor, now);
    case RefundNotification::State::Abnormal: return m_store.noteAbnormal(n.refundNo, why, kActor, now);
    }
    return Error::make(ErrorCode::Internal, QStringLiteral("a refund notification in no known state"));
}

Result<RefundService::FollowUpReport> RefundService::followUp(qint64 updatedBeforeMs, int limit)
{
    FollowUpReport report;
    auto rows = m_store.unfinished(updatedBeforeMs, limit);
    if (!rows)
        return rows.error();
    for (const RefundRecord &refund : rows.value()) {
        if (refund.status == RefundStatus::Requested) {
            auto sent = submit(refund.refundNo);
            if (!sent)
                ++report.failed;
            else if (sent.value().status == RefundStatus::Requested)
                ++report.waiting;
            else
                ++report.submitted;
            continue;
        }
        PaymentGateway *gateway = m_gateways ? m_gateways(refund.channel) : nullptr;
        auto asked = gateway ? gateway->queryRefund(refund.paymentNo, refund.refundNo)
                             : Result<GatewayRefund>(Error::make(ErrorCode::Unavailable, QStringLiteral("no gateway")));
        if (!asked) {
            ++report.failed;
            qCWarning(payonce::lcCore).noquote()
                << QStringLiteral("refund %1: query failed: %2").arg(refund.refundNo, asked.error().internalMessage);
            continue;
        }
        const qint64 now = m_clock.nowMs();
        Result<RefundSettlement> settled = RefundSettlement::AlreadySettled;
        switch (asked.value().state) {
        case GatewayRefundState::Processing: ++report.waiting; continue;
        case GatewayRefundState::Success:
            settled = m_store.settleSucceeded(refund.refundNo, asked.value().refundId, kActor,
                                              QStringLiteral("the platform's refund query: success"), now);
            break;
        case GatewayRefundState::Closed:
            settled = applyFailure(
                refund, QStringLiteral("the platform's refund query: %1").arg(stateName(asked.value().state)));
            break;
        case GatewayRefundState::Abnormal:
            // Still waiting for manual handling at the platform: asked again next time.
            if (auto abnormal = m_store.noteAbnormal(
                    refund.refundNo, QStringLiteral("the platform's refund query: abnormal"), kActor, now);
                !abnormal)
                ++report.failed;
            else
                ++report.waiting;
            continue;
        case GatewayRefundState::NotFound:
            // Accepted once, unknown now: nothing was refunded under this number, and
            // sending it again cannot refund twice.
            if (auto back = m_store.recordAttempt(refund.refundNo, false, {},
                                                  QStringLiteral("the platform no longer knows it"), now);
                !back) {
                ++report.failed;
                continue;
            }
            ++report.waiting;
            continue;
        }
        if (!settled)
            ++report.failed;
        else
            ++report.settled;
    }
    return report;
}

} // namespace payonce::core
