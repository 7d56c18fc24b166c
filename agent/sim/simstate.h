#pragma once

#include "core/channel.h"

#include <QDateTime>
#include <QHash>
#include <QMap>
#include <QObject>
#include <QString>

#include <optional>

namespace payonce::sim {

/// One trade at the simulated platform, keyed by (channel, out_trade_no).
struct SimTrade {
    enum class State { NotPaid, Paid, Closed };
    core::Channel channel = core::Channel::WeChat;
    QString outTradeNo;
    qint64 amountFen = 0;
    QString description;
    QString notifyUrl;       ///< from the create request (WeChat notify_url, Alipay notify_url param)
    QString merchantId;      ///< WeChat mchid of the create request
    QString appId;           ///< WeChat appid / Alipay app_id of the create request
    QString codeUrl;
    State state = State::NotPaid;
    QString payNo;          ///< transaction_id / trade_no once paid
    QDateTime createdAt;
    QDateTime paidAt;
};

QString tradeStateName(SimTrade::State state); ///< "NOTPAY" | "SUCCESS" | "CLOSED" (WeChat's words)

/// Faults injected per channel (POST /sim/faults). Applied to gateway endpoints, except
/// duplicate, which applies to the notifications (SimNotifier).
struct SimFaults {
    int latencyMs = 0;             ///< delay before each answer
    double errorRate = 0.0;        ///< probability in [0,1] of answering errorStatus instead
    int errorStatus = 500;
    bool hang = false;             ///< accept, never answer
    bool tamperResponses = false;  ///< alter the body after signing it
    bool replayLast = false;       ///< answer with the previous answer of the same endpoint
    int duplicate = 1;             ///< notifications: identical concurrent copies per delivery
};

/// The simulator's in-memory world: trades, faults, counters. Lives on the main thread
/// and is used only there (the server answers from the event loop; nothing blocks), so
/// it needs no lock. tradePaid is the hook for the notifier (issue 5).
class SimState : public QObject {
    Q_OBJECT
public:
    enum class CreateOutcome { Created, Existing, AmountDiffers, AlreadyPaid, AlreadyClosed };

    /// Creates the trade, or finds the existing one for the same (channel, out_trade_no):
    /// idempotent like the platforms — never a second trade for one out_trade_no.
    CreateOutcome create(const SimTrade &proposed, SimTrade *result);
    std::optional<SimTrade> find(core::Channel channel, const QString &outTradeNo) const;
    QList<SimTrade> findAll(const QString &outTradeNo) const;

    enum class PayOutcome { Paid, AlreadyPaid, NotFound, Closed };
    PayOutcome pay(core::Channel channel, const QString &outTradeNo, SimTrade *result);
    enum class CloseOutcome { Closed, AlreadyClosed, NotFound, Paid };
    CloseOutcome close(core::Channel channel, const QString &outTradeNo);

    SimFaults faults(core::Channel channel) const { return m_faults.value(channel); }
    void setFaults(core::Channel channel, const SimFaults &faults) { m_faults.insert(channel, faults); }

    void countRequest(const QString &endpoint) { ++m_requests[endpoint]; }
    void countSignatureFailure(core::Channel channel) { ++m_signatureFailures[channel]; }
    int ordersCreated(core::Channel channel) const { return m_ordersCreated.value(channel); }
    int signatureFailures(core::Channel channel) const { return m_signatureFailures.value(channel); }
    QMap<QString, int> requests() const { return m_requests; }

    /// Forget trades, counters and faults (POST /sim/reset).
    void reset();

Q_SIGNALS:
    void tradePaid(const payonce::sim::SimTrade &trade);

private:
    static QString key(core::Channel channel, const QString &outTradeNo);
    QHash<QString, SimTrade> m_trades;
    QHash<core::Channel, SimFaults> m_faults;
    QHash<core::Channel, int> m_ordersCreated;
    QHash<core::Channel, int> m_signatureFailures;
    QMap<QString, int> m_requests;
};

} // namespace payonce::sim
