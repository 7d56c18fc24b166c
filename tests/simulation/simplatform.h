#pragma once

#include "simclock.h"
#include "simrandom.h"

#include "core/callback/paymentnotification.h"
#include "core/ports/paymentgateway.h"
#include "core/settlement/refundnotification.h"

#include <QList>
#include <QString>

#include <map>
#include <optional>

namespace payonce::simulation {

/// How the platform answers the next create-order call.
enum class CreateAnswer {
    Ok,             ///< the trade exists, code_url returned
    Timeout,        ///< Unavailable; nothing was created
    TimeoutCreated, ///< Unavailable; the trade was created all the same (outcome unknown)
    Error,          ///< InvalidInput: refused, nothing created
    Slow,           ///< answers Ok after 3–8 s of the simulation's time
};

/// How the platform answers the next refund request.
enum class RefundAnswer {
    Processing,
    Success,
    Closed,
    Abnormal,
    Timeout
};

/// One out_trade_no as the platform sees it.
struct PlatformTrade {
    QString paymentNo;
    QString orderNo;
    core::Channel channel = core::Channel::WeChat;
    qint64 amountFen = 0;
    core::GatewayTradeState state = core::GatewayTradeState::NotPaid;
    QString payNo;
    qint64 refundedFen = 0; ///< what refunds have given back of it (state Success)
    int sequence = 0;       ///< creation order: decisions never depend on the random payment_no
};

/// One refund as the platform sees it.
struct PlatformRefund {
    QString refundNo;
    QString paymentNo;
    QString payNo;
    core::Channel channel = core::Channel::WeChat;
    qint64 amountFen = 0;
    qint64 totalFen = 0;
    core::GatewayRefundState state = core::GatewayRefundState::Processing;
    QString refundId;
    bool abnormalSeen = false; ///< went through ABNORMAL (a later SUCCESS is WeChat's manual handling)
};

/// The scripted WeChat Pay / Alipay platform of the simulation: trades, payments, refunds
/// and the notifications they cause, all decided by the run's SimRandom through the
/// driver (scriptCreate, scriptRefund, userPays, finishRefund). It answers the merchant API
/// (SimGateway) from its own state, never from the database. Used on the driver's thread only.
class SimPlatform {
public:
    static inline const QString kWeChatMchId = QStringLiteral("1900000109");
    static inline const QString kAlipaySellerId = QStringLiteral("2088102146225135");

    SimPlatform(SimClock &clock, SimRandom &random) : m_clock(clock), m_random(random) {}

    void scriptCreate(CreateAnswer answer) { m_create = answer; }
    void scriptRefund(RefundAnswer answer) { m_refund = answer; }
    void scriptQueryFails(bool fails) { m_queryFails = fails; }

    // The merchant API (SimGateway forwards here).
    core::Result<core::GatewayOrder> createOrder(core::Channel channel, const core::GatewayOrderRequest &request);
    core::Result<core::GatewayTrade> query(const QString &paymentNo);
    core::Result<void> close(const QString &paymentNo);
    core::Result<core::GatewayRefund> refund(core::Channel channel, const core::GatewayRefundRequest &request);
    core::Result<core::GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo);

    /// The payer pays one open trade of the order (the oldest NotPaid one): its payment
    /// notification, or nullopt when the order has no open trade.
    std::optional<core::RawDelivery> userPays(const QString &orderNo);
    /// Money taken outside any open trade of ours (a second payment of the order, a payment
    /// racing its close): a fresh pay_no with out_trade_no = the order number.
    core::RawDelivery strayPayment(core::Channel channel, const QString &orderNo, qint64 amountFen);
    /// A notification for (payNo, out_trade_no) of `amountFen`; a bad signature when asked.
    core::RawDelivery notification(core::Channel channel, const QString &payNo, const QString &paymentNo,
                                   qint64 amountFen, bool goodSignature = true) const;

    /// Ends a refund at the platform (Processing → Success|Closed|Abnormal, Abnormal →
    /// Success|Closed) and returns the notification it sends; nullopt when it cannot move.
    std::optional<core::RefundNotification> finishRefund(const QString &refundNo, core::GatewayRefundState to);
    /// The notification of a refund in its current state (for resending).
    std::optional<core::RefundNotification> refundNotification(const QString &refundNo) const;

    /// Refunds in creation order (no map iteration decides anything).
    const QList<QString> &refundNos() const { return m_refundOrder; }
    const PlatformRefund *findRefund(const QString &refundNo) const;
    const PlatformTrade *findTrade(const QString &paymentNo) const;
    /// Every payment the platform took: (channel, pay_no) → amount; the money invariants' truth.
    struct Payment {
        core::Channel channel;
        QString payNo;
        QString orderNo;
        qint64 amountFen;
    };
    const QList<Payment> &payments() const { return m_payments; }

private:
    QString newPayNo(core::Channel channel);
    core::RefundNotification notificationOf(const PlatformRefund &refund) const;

    SimClock &m_clock;
    SimRandom &m_random;
    CreateAnswer m_create = CreateAnswer::Ok;
    RefundAnswer m_refund = RefundAnswer::Processing;
    bool m_queryFails = false;
    std::map<QString, PlatformTrade> m_trades;   // by payment_no
    std::map<QString, PlatformRefund> m_refunds; // by refund_no
    QList<QString> m_refundOrder;
    QList<Payment> m_payments;
    int m_sequence = 0;
    int m_payNoSequence = 0;
};

/// The merchant API of one channel, answered by the SimPlatform.
class SimGateway final : public core::PaymentGateway {
public:
    SimGateway(SimPlatform &platform, core::Channel channel) : m_platform(platform), m_channel(channel) {}
    core::Channel channel() const override { return m_channel; }
    core::Result<core::GatewayOrder> createOrder(const core::GatewayOrderRequest &request) override
    {
        return m_platform.createOrder(m_channel, request);
    }
    core::Result<core::GatewayTrade> query(const QString &paymentNo) override { return m_platform.query(paymentNo); }
    core::Result<void> close(const QString &paymentNo) override { return m_platform.close(paymentNo); }
    core::Result<core::GatewayRefund> refund(const core::GatewayRefundRequest &request) override
    {
        return m_platform.refund(m_channel, request);
    }
    core::Result<core::GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) override
    {
        return m_platform.queryRefund(paymentNo, refundNo);
    }

private:
    SimPlatform &m_platform;
    core::Channel m_channel;
};

} // namespace payonce::simulation
