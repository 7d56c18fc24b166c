#pragma once

#include "core/ports/notificationverifier.h"
#include "core/ports/paymentgateway.h"

#include <QStringList>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>

namespace payonce::testsupport {

/// Decodes the JSON body of jsonDelivery() as a verified notification of merchant
/// `mchId` (the real signatures are tst_notificationverifier's): for suites about what
/// happens after verification.
class JsonVerifier final : public core::NotificationVerifier {
public:
    explicit JsonVerifier(QString mchId) : m_mchId(std::move(mchId)) {}
    core::Result<core::PaymentNotification> verify(const core::RawDelivery &delivery, bool, qint64) const override;

private:
    QString m_mchId;
};

/// A WeChat success notification for (payNo, paymentNo, amountFen) that JsonVerifier accepts.
core::RawDelivery jsonDelivery(const QString &payNo, const QString &paymentNo, qint64 amountFen);

/// A payment platform as the settle and close suites need it: per out_trade_no a state,
/// every query and close recorded in order. `payOnClose`: the user pays just before the
/// close arrives (the close then finds it paid: Conflict). `queryFails` / `closeFails`:
/// the platform times out. Serves whichever channel it is asked for. Thread-safe.
class FakePlatform final : public core::PaymentGateway {
public:
    struct Trade {
        core::GatewayTradeState state = core::GatewayTradeState::NotPaid;
        QString payNo;
        bool payOnClose = false;
        bool queryFails = false;
        bool closeFails = false;
    };

    /// A paid trade reports `paidAmountFen`.
    explicit FakePlatform(qint64 paidAmountFen) : m_paidAmountFen(paidAmountFen) {}

    void set(const QString &paymentNo, Trade trade);
    Trade trade(const QString &paymentNo);
    QStringList calls();
    void setQueryDelay(std::chrono::milliseconds delay) { m_queryDelay = delay; }
    /// Called (outside the platform's lock) before each close is answered.
    void setOnClose(std::function<void(const QString &paymentNo)> onClose);

    core::Channel channel() const override { return core::Channel::WeChat; }
    core::Result<core::GatewayOrder> createOrder(const core::GatewayOrderRequest &) override;
    core::Result<core::GatewayTrade> query(const QString &paymentNo) override;
    core::Result<void> close(const QString &paymentNo) override;
    /// Never used by the patrol or the closer: an Internal error.
    core::Result<core::GatewayRefund> refund(const core::GatewayRefundRequest &request) override;
    core::Result<core::GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) override;

private:
    const qint64 m_paidAmountFen;
    std::mutex m_mutex;
    std::map<QString, Trade> m_trades;
    QStringList m_calls;
    std::function<void(const QString &)> m_onClose;
    std::chrono::milliseconds m_queryDelay{0};
};

} // namespace payonce::testsupport
