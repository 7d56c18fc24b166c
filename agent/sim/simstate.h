#pragma once

#include "core/common/channel.h"

#include <QDateTime>
#include <QHash>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace payonce::sim {

/// One trade at the simulated platform, keyed by (channel, out_trade_no).
struct SimTrade {
    enum class State {
        NotPaid,
        Paid,
        Closed
    };
    core::Channel channel = core::Channel::WeChat;
    QString outTradeNo;
    qint64 amountFen = 0;
    QString description;
    QString body;       ///< Alipay biz_content `body` (optional; empty when the merchant gave none)
    QString notifyUrl;  ///< from the create request (WeChat notify_url, Alipay notify_url param)
    QString merchantId; ///< WeChat mchid of the create request
    QString appId;      ///< WeChat appid / Alipay app_id of the create request
    QString codeUrl;
    State state = State::NotPaid;
    QString payNo; ///< transaction_id / trade_no once paid
    QDateTime createdAt;
    QDateTime paidAt;
    /// The W3C traceparent header of the create request, as received (empty: none). The
    /// trade's notifications continue that trace — a real platform would not; the
    /// simulator does so that one trace can be followed from the click to the webhook.
    QByteArray traceParent;
    qint64 refundedFen = 0; ///< refunds processing or made (never above amountFen)
    QStringList refundNos;  ///< out_refund_no / out_request_no of its refunds, in order
};

QString tradeStateName(SimTrade::State state); ///< "NOTPAY" | "SUCCESS" | "CLOSED" (WeChat's words)

/// One refund at the simulated platform, keyed by (channel, out_refund_no) — WeChat's
/// out_refund_no, Alipay's out_request_no. The key is the platform's idempotency: a second
/// request with it answers this refund and refunds nothing.
struct SimRefund {
    enum class State {
        Processing,
        Success,
        Closed,
        Abnormal
    };
    core::Channel channel = core::Channel::WeChat;
    QString outRefundNo;
    QString refundId; ///< WeChat refund_id (Alipay has none; the simulator still numbers it)
    QString outTradeNo;
    QString payNo;
    qint64 amountFen = 0; ///< this refund
    qint64 totalFen = 0;  ///< the trade's amount
    QString reason;
    QString notifyUrl; ///< the refund request's, else (Alipay) the trade's
    State state = State::Processing;
    QDateTime createdAt;
    QDateTime finishedAt; ///< success_time / gmt_refund, or when it failed
};

QString refundStateName(SimRefund::State state); ///< "PROCESSING" | "SUCCESS" | "CLOSED" | "ABNORMAL"

/// Faults injected per channel (POST /sim/faults). Applied to gateway endpoints, except
/// duplicate, which applies to the notifications (SimNotifier).
struct SimFaults {
    int latencyMs = 0;      ///< delay before each answer
    double errorRate = 0.0; ///< probability in [0,1] of answering errorStatus instead
    int errorStatus = 500;
    bool hang = false;            ///< accept, never answer
    bool tamperResponses = false; ///< alter the body after signing it
    bool replayLast = false;      ///< answer with the previous answer of the same endpoint
    int duplicate = 1;            ///< notifications: identical concurrent copies per delivery
    bool refundFail = false;      ///< refunds fail: WeChat ABNORMAL after PROCESSING, Alipay refused
};

/// The simulator's in-memory world: trades, faults, counters. Lives on the main thread
/// and is used only there (the server answers from the event loop; nothing blocks), so
/// it needs no lock. tradePaid and refundFinished are the hooks for the notifier.
class SimState : public QObject {
    Q_OBJECT
public:
    enum class CreateOutcome {
        Created,
        Existing,
        AmountDiffers,
        AlreadyPaid,
        AlreadyClosed
    };

    /// Creates the trade, or finds the existing one for the same (channel, out_trade_no):
    /// idempotent like the platforms — never a second trade for one out_trade_no.
    CreateOutcome create(const SimTrade &proposed, SimTrade *result);
    std::optional<SimTrade> find(core::Channel channel, const QString &outTradeNo) const;
    QList<SimTrade> findAll(const QString &outTradeNo) const;

    enum class PayOutcome {
        Paid,
        AlreadyPaid,
        NotFound,
        Closed
    };
    PayOutcome pay(core::Channel channel, const QString &outTradeNo, SimTrade *result);
    enum class CloseOutcome {
        Closed,
        AlreadyClosed,
        NotFound,
        Paid
    };
    CloseOutcome close(core::Channel channel, const QString &outTradeNo);

    /// Records a refund of a paid trade (found by payNo when given, else outTradeNo) as
    /// Processing, or finds the refund already made under the same out_refund_no:
    /// Existing when it names the same trade and amount (nothing refunded again),
    /// RefundNoReused otherwise. The refunds of a trade never exceed its amount
    /// (OverRefund); a trade not paid cannot be refunded (NotPaid); a proposed totalFen
    /// (WeChat's amount.total; 0: not given) must be the trade's amount (TotalDiffers).
    enum class RefundOutcome {
        Created,
        Existing,
        TradeNotFound,
        NotPaid,
        OverRefund,
        RefundNoReused,
        TotalDiffers
    };
    RefundOutcome refund(const SimRefund &proposed, SimRefund *result);
    /// Ends a Processing refund: Success, or Abnormal when failed (its amount becomes
    /// refundable again). Emits refundFinished. False when there is no such refund or it
    /// has already ended.
    bool finishRefund(core::Channel channel, const QString &outRefundNo, bool failed);
    std::optional<SimRefund> findRefund(core::Channel channel, const QString &outRefundNo) const;
    QList<SimRefund> refundsOf(const SimTrade &trade) const;

    SimFaults faults(core::Channel channel) const { return m_faults.value(channel); }
    void setFaults(core::Channel channel, const SimFaults &faults) { m_faults.insert(channel, faults); }

    void countRequest(const QString &endpoint) { ++m_requests[endpoint]; }
    void countSignatureFailure(core::Channel channel) { ++m_signatureFailures[channel]; }
    int ordersCreated(core::Channel channel) const { return m_ordersCreated.value(channel); }
    int signatureFailures(core::Channel channel) const { return m_signatureFailures.value(channel); }
    QMap<QString, int> requests() const { return m_requests; }
    void countRefundCall(core::Channel channel) { ++m_refundCalls[channel]; }
    int refundCalls(core::Channel channel) const { return m_refundCalls.value(channel); }
    int refundsCreated(core::Channel channel) const { return m_refundsCreated.value(channel); }
    qint64 refundedFen(core::Channel channel) const { return m_refundedFen.value(channel); }

    /// Forget trades, counters and faults (POST /sim/reset).
    void reset();

Q_SIGNALS:
    void tradePaid(const payonce::sim::SimTrade &trade);
    /// A refund reached Success or Abnormal; trade is its trade after the change.
    void refundFinished(const payonce::sim::SimRefund &refund, const payonce::sim::SimTrade &trade);

private:
    static QString key(core::Channel channel, const QString &outTradeNo);
    QHash<QString, SimTrade> m_trades;
    QHash<core::Channel, SimFaults> m_faults;
    QHash<core::Channel, int> m_ordersCreated;
    QHash<core::Channel, int> m_signatureFailures;
    QMap<QString, int> m_requests;
    QHash<QString, SimRefund> m_refunds; // key(channel, out_refund_no)
    QHash<core::Channel, int> m_refundCalls;
    QHash<core::Channel, int> m_refundsCreated;
    QHash<core::Channel, qint64> m_refundedFen;
};

} // namespace payonce::sim
