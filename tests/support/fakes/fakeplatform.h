#pragma once

#include "core/ports/paymentgateway.h"

#include <QList>
#include <QStringList>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>

namespace payonce::testsupport {

/// A payment platform as the settle, close and refund suites need it. Trades: per
/// out_trade_no a state, every query and close recorded in order; `payOnClose`: the user
/// pays just before the close arrives (the close then finds it paid: Conflict);
/// `queryFails` / `closeFails`: the platform times out. Refunds: the next answers queued
/// per refund number (Processing when none is queued), every call counted, a refund's
/// state as a query finds it. Serves whichever channel it is asked for. Thread-safe.
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
    core::Result<core::GatewayRefund> refund(const core::GatewayRefundRequest &request) override;
    core::Result<core::GatewayRefund> queryRefund(const QString &paymentNo, const QString &refundNo) override;

    /// The answer to the next refund call with this number.
    void queueRefundAnswer(const QString &refundNo, core::Result<core::GatewayRefund> answer);
    /// What a refund query for this number finds (Processing until set).
    void setQueriedRefundState(const QString &refundNo, core::GatewayRefundState state);
    int refundCalls(const QString &refundNo);
    core::GatewayRefundRequest lastRefundRequest(const QString &refundNo);
    /// A refund the platform made, in `state`, with a platform refund id of its own.
    static core::GatewayRefund madeRefund(const QString &refundNo, core::GatewayRefundState state);

private:
    const qint64 m_paidAmountFen;
    std::mutex m_mutex;
    std::map<QString, Trade> m_trades;
    QStringList m_calls;
    std::function<void(const QString &)> m_onClose;
    std::chrono::milliseconds m_queryDelay{0};
    std::map<QString, QList<core::Result<core::GatewayRefund>>> m_refundAnswers;
    std::map<QString, core::GatewayRefundState> m_queriedRefunds;
    std::map<QString, int> m_refundCalls;
    std::map<QString, core::GatewayRefundRequest> m_refundRequests;
};

} // namespace payonce::testsupport
