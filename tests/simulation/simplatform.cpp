#include "simplatform.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::simulation {

using core::Channel;
using core::Error;
using core::ErrorCode;
using core::GatewayRefundState;
using core::GatewayTradeState;

QString SimPlatform::newPayNo(Channel channel)
{
    ++m_payNoSequence;
    return (channel == Channel::WeChat ? QStringLiteral("4200") : QStringLiteral("2026"))
           + QString::number(m_payNoSequence).rightJustified(12, QLatin1Char('0'));
}

core::Result<core::GatewayOrder> SimPlatform::createOrder(Channel channel, const core::GatewayOrderRequest &request)
{
    const CreateAnswer answer = m_create;
    m_create = CreateAnswer::Ok;
    if (answer == CreateAnswer::Timeout)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("sim platform: create timed out"));
    if (answer == CreateAnswer::Error)
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("sim platform: PARAM_ERROR"));
    if (answer == CreateAnswer::Slow)
        m_clock.advance(m_random.between(3000, 8000));
    auto found = m_trades.find(request.paymentNo);
    if (found == m_trades.end()) {
        PlatformTrade trade;
        trade.paymentNo = request.paymentNo;
        trade.orderNo = request.orderNo;
        trade.channel = channel;
        trade.amountFen = request.amountFen;
        trade.sequence = ++m_sequence;
        found = m_trades.emplace(request.paymentNo, trade).first;
    } else if (found->second.state != GatewayTradeState::NotPaid) {
        return Error::make(ErrorCode::Conflict,
                           QStringLiteral("sim platform: trade %1 is not open").arg(request.paymentNo));
    }
    if (answer == CreateAnswer::TimeoutCreated)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("sim platform: create timed out after creating"));
    return core::GatewayOrder{QStringLiteral("weixin://wxpay/bizpayurl?pr=") + request.paymentNo};
}

core::Result<core::GatewayTrade> SimPlatform::query(const QString &paymentNo)
{
    if (m_queryFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("sim platform: query timed out"));
    const auto found = m_trades.find(paymentNo);
    if (found == m_trades.end())
        return core::GatewayTrade{};
    const PlatformTrade &t = found->second;
    core::GatewayTrade trade;
    trade.state = t.state;
    if (t.state == GatewayTradeState::Paid || t.state == GatewayTradeState::Refunded) {
        trade.payNo = t.payNo;
        trade.amountFen = t.amountFen;
    }
    return trade;
}

core::Result<void> SimPlatform::close(const QString &paymentNo)
{
    if (m_queryFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("sim platform: close timed out"));
    auto found = m_trades.find(paymentNo);
    if (found == m_trades.end())
        return {};
    PlatformTrade &t = found->second;
    if (t.state == GatewayTradeState::Paid || t.state == GatewayTradeState::Refunded)
        return Error::make(ErrorCode::Conflict, QStringLiteral("sim platform: ORDERPAID"));
    t.state = GatewayTradeState::Closed;
    return {};
}

core::Result<core::GatewayRefund> SimPlatform::refund(Channel channel, const core::GatewayRefundRequest &request)
{
    const RefundAnswer answer = m_refund;
    m_refund = RefundAnswer::Processing;
    auto existing = m_refunds.find(request.refundNo);
    if (existing == m_refunds.end()) {
        // The money the payer paid under that pay_no: a trade of ours, or a stray payment.
        QString payNo = request.payNo;
        if (payNo.isEmpty()) {
            if (const PlatformTrade *trade = findTrade(request.paymentNo))
                payNo = trade->payNo;
        }
        qint64 paid = -1;
        for (const Payment &p : std::as_const(m_payments)) {
            if (p.payNo == payNo && p.channel == channel)
                paid = p.amountFen;
        }
        if (paid < 0)
            return Error::make(ErrorCode::NotFound, QStringLiteral("sim platform: no payment %1").arg(payNo));
        qint64 refunded = 0;
        for (const auto &[no, r] : m_refunds) {
            // An ABNORMAL refund may still be paid out by hand: it counts until CLOSED.
            if (r.payNo == payNo && r.state != GatewayRefundState::Closed)
                refunded += r.amountFen;
        }
        if (request.amountFen <= 0 || refunded + request.amountFen > paid)
            return Error::make(ErrorCode::Conflict,
                               QStringLiteral("sim platform: NOT_ENOUGH (refund above the payment)"));
        PlatformRefund r;
        r.refundNo = request.refundNo;
        r.paymentNo = request.paymentNo;
        r.payNo = payNo;
        r.channel = channel;
        r.amountFen = request.amountFen;
        r.totalFen = paid;
        r.refundId = channel == Channel::WeChat ? QStringLiteral("5030") + request.refundNo : QString();
        r.state = GatewayRefundState::Processing;
        switch (answer) {
        case RefundAnswer::Success: r.state = GatewayRefundState::Success; break;
        case RefundAnswer::Closed: r.state = GatewayRefundState::Closed; break;
        case RefundAnswer::Abnormal:
            r.state = GatewayRefundState::Abnormal;
            r.abnormalSeen = true;
            break;
        case RefundAnswer::Processing:
        case RefundAnswer::Timeout: break;
        }
        existing = m_refunds.emplace(r.refundNo, r).first;
        m_refundOrder.append(r.refundNo);
        if (r.state == GatewayRefundState::Success) {
            auto trade = m_trades.find(r.paymentNo);
            if (trade != m_trades.end() && trade->second.payNo == r.payNo) {
                trade->second.refundedFen += r.amountFen;
                if (trade->second.refundedFen >= trade->second.amountFen)
                    trade->second.state = GatewayTradeState::Refunded;
            }
        }
    }
    if (answer == RefundAnswer::Timeout)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("sim platform: refund timed out"));
    const PlatformRefund &r = existing->second;
    return core::GatewayRefund{r.state, r.refundNo, r.refundId, r.paymentNo, r.payNo, r.amountFen};
}

core::Result<core::GatewayRefund> SimPlatform::queryRefund(const QString &paymentNo, const QString &refundNo)
{
    if (m_queryFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("sim platform: refund query timed out"));
    const auto found = m_refunds.find(refundNo);
    if (found == m_refunds.end())
        return core::GatewayRefund{GatewayRefundState::NotFound, refundNo, {}, paymentNo, {}, 0};
    const PlatformRefund &r = found->second;
    return core::GatewayRefund{r.state, r.refundNo, r.refundId, r.paymentNo, r.payNo, r.amountFen};
}

std::optional<core::RawDelivery> SimPlatform::userPays(const QString &orderNo)
{
    PlatformTrade *open = nullptr;
    for (auto &[no, t] : m_trades) {
        if (t.orderNo == orderNo && t.state == GatewayTradeState::NotPaid && (!open || t.sequence < open->sequence))
            open = &t;
    }
    if (!open)
        return std::nullopt;
    open->state = GatewayTradeState::Paid;
    open->payNo = newPayNo(open->channel);
    m_payments.append({open->channel, open->payNo, orderNo, open->amountFen});
    return notification(open->channel, open->payNo, open->paymentNo, open->amountFen);
}

core::RawDelivery SimPlatform::strayPayment(Channel channel, const QString &orderNo, qint64 amountFen)
{
    const QString payNo = newPayNo(channel);
    m_payments.append({channel, payNo, orderNo, amountFen});
    return notification(channel, payNo, orderNo, amountFen);
}

core::RawDelivery SimPlatform::notification(Channel channel, const QString &payNo, const QString &paymentNo,
                                            qint64 amountFen, bool goodSignature) const
{
    core::RawDelivery raw;
    raw.channel = channel;
    raw.headers = {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}};
    raw.body = QJsonDocument(QJsonObject{{QStringLiteral("signature"),
                                          goodSignature ? QStringLiteral("valid") : QStringLiteral("forged")},
                                         {QStringLiteral("pay_no"), payNo},
                                         {QStringLiteral("out_trade_no"), paymentNo},
                                         {QStringLiteral("amount"), amountFen},
                                         {QStringLiteral("currency"), QStringLiteral("CNY")},
                                         {QStringLiteral("merchant"),
                                          channel == Channel::WeChat ? kWeChatMchId : kAlipaySellerId},
                                         {QStringLiteral("trade_state"), QStringLiteral("SUCCESS")}})
                   .toJson(QJsonDocument::Compact);
    raw.receivedAtMs = m_clock.nowMs();
    return raw;
}

core::RefundNotification SimPlatform::notificationOf(const PlatformRefund &r) const
{
    core::RefundNotification n;
    n.channel = r.channel;
    n.refundNo = r.refundNo;
    n.refundId = r.refundId;
    n.paymentNo = r.paymentNo;
    n.payNo = r.payNo;
    n.totalFen = r.totalFen;
    n.merchantId = r.channel == Channel::WeChat ? kWeChatMchId : kAlipaySellerId;
    switch (r.state) {
    case GatewayRefundState::Success:
        n.state = core::RefundNotification::State::Success;
        n.refundStatus = QStringLiteral("SUCCESS");
        break;
    case GatewayRefundState::Closed:
        n.state = core::RefundNotification::State::Closed;
        n.refundStatus = QStringLiteral("CLOSED");
        break;
    default:
        n.state = core::RefundNotification::State::Abnormal;
        n.refundStatus = QStringLiteral("ABNORMAL");
        break;
    }
    if (r.channel == Channel::WeChat) {
        n.amountFen = r.amountFen;
    } else {
        // Alipay says what the trade has had back so far, this refund included.
        qint64 total = 0;
        for (const auto &[no, other] : m_refunds) {
            if (other.payNo == r.payNo && other.state == GatewayRefundState::Success)
                total += other.amountFen;
        }
        n.refundedTotalFen = total;
    }
    return n;
}

std::optional<core::RefundNotification> SimPlatform::finishRefund(const QString &refundNo, GatewayRefundState to)
{
    auto found = m_refunds.find(refundNo);
    if (found == m_refunds.end())
        return std::nullopt;
    PlatformRefund &r = found->second;
    const bool open = r.state == GatewayRefundState::Processing || r.state == GatewayRefundState::Abnormal;
    if (!open || to == GatewayRefundState::Processing || to == GatewayRefundState::NotFound || to == r.state)
        return std::nullopt;
    // Alipay refunds end at once and notify only success.
    if (r.channel == Channel::Alipay && to != GatewayRefundState::Success)
        return std::nullopt;
    r.state = to;
    if (to == GatewayRefundState::Abnormal)
        r.abnormalSeen = true;
    if (to == GatewayRefundState::Success) {
        auto trade = m_trades.find(r.paymentNo);
        if (trade != m_trades.end() && trade->second.payNo == r.payNo) {
            trade->second.refundedFen += r.amountFen;
            if (trade->second.refundedFen >= trade->second.amountFen)
                trade->second.state = GatewayTradeState::Refunded;
        }
    }
    return notificationOf(r);
}

std::optional<core::RefundNotification> SimPlatform::refundNotification(const QString &refundNo) const
{
    const auto found = m_refunds.find(refundNo);
    if (found == m_refunds.end() || found->second.state == GatewayRefundState::Processing)
        return std::nullopt;
    return notificationOf(found->second);
}

const PlatformRefund *SimPlatform::findRefund(const QString &refundNo) const
{
    const auto found = m_refunds.find(refundNo);
    return found == m_refunds.end() ? nullptr : &found->second;
}

const PlatformTrade *SimPlatform::findTrade(const QString &paymentNo) const
{
    const auto found = m_trades.find(paymentNo);
    return found == m_trades.end() ? nullptr : &found->second;
}

} // namespace payonce::simulation
