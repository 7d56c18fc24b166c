#include "simstate.h"

#include <QRandomGenerator>

namespace payonce::sim {

QString tradeStateName(SimTrade::State state)
{
    switch (state) {
    case SimTrade::State::NotPaid: return QStringLiteral("NOTPAY");
    case SimTrade::State::Paid: return QStringLiteral("SUCCESS");
    case SimTrade::State::Closed: return QStringLiteral("CLOSED");
    }
    return {};
}

QString refundStateName(SimRefund::State state)
{
    switch (state) {
    case SimRefund::State::Processing: return QStringLiteral("PROCESSING");
    case SimRefund::State::Success: return QStringLiteral("SUCCESS");
    case SimRefund::State::Closed: return QStringLiteral("CLOSED");
    case SimRefund::State::Abnormal: return QStringLiteral("ABNORMAL");
    }
    return {};
}

QString SimState::key(core::Channel channel, const QString &outTradeNo)
{
    return core::channelName(channel) + u'/' + outTradeNo;
}

SimState::CreateOutcome SimState::create(const SimTrade &proposed, SimTrade *result)
{
    const QString k = key(proposed.channel, proposed.outTradeNo);
    auto it = m_trades.find(k);
    if (it != m_trades.end()) {
        *result = *it;
        if (it->state == SimTrade::State::Paid)
            return CreateOutcome::AlreadyPaid;
        if (it->state == SimTrade::State::Closed)
            return CreateOutcome::AlreadyClosed;
        if (it->amountFen != proposed.amountFen)
            return CreateOutcome::AmountDiffers;
        return CreateOutcome::Existing;
    }
    SimTrade trade = proposed;
    trade.state = SimTrade::State::NotPaid;
    trade.createdAt = QDateTime::currentDateTimeUtc();
    m_trades.insert(k, trade);
    ++m_ordersCreated[proposed.channel];
    *result = trade;
    return CreateOutcome::Created;
}

std::optional<SimTrade> SimState::find(core::Channel channel, const QString &outTradeNo) const
{
    auto it = m_trades.constFind(key(channel, outTradeNo));
    if (it == m_trades.constEnd())
        return std::nullopt;
    return *it;
}

QList<SimTrade> SimState::findAll(const QString &outTradeNo) const
{
    QList<SimTrade> all;
    for (core::Channel c : core::allChannels) {
        if (auto t = find(c, outTradeNo))
            all.append(*t);
    }
    return all;
}

SimState::PayOutcome SimState::pay(core::Channel channel, const QString &outTradeNo, SimTrade *result)
{
    auto it = m_trades.find(key(channel, outTradeNo));
    if (it == m_trades.end())
        return PayOutcome::NotFound;
    *result = *it;
    if (it->state == SimTrade::State::Paid)
        return PayOutcome::AlreadyPaid;
    if (it->state == SimTrade::State::Closed)
        return PayOutcome::Closed;
    // transaction_id (WeChat, 28 digits from 4200) / trade_no (Alipay, 28 digits from date).
    QString digits;
    for (int i = 0; i < 20; ++i)
        digits += QChar(u'0' + QRandomGenerator::global()->bounded(10));
    it->payNo = (channel == core::Channel::WeChat
                     ? QStringLiteral("42000000")
                     : QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd")))
                + digits;
    it->state = SimTrade::State::Paid;
    it->paidAt = QDateTime::currentDateTimeUtc();
    *result = *it;
    Q_EMIT tradePaid(*it);
    return PayOutcome::Paid;
}

SimState::CloseOutcome SimState::close(core::Channel channel, const QString &outTradeNo)
{
    auto it = m_trades.find(key(channel, outTradeNo));
    if (it == m_trades.end())
        return CloseOutcome::NotFound;
    if (it->state == SimTrade::State::Paid)
        return CloseOutcome::Paid;
    if (it->state == SimTrade::State::Closed)
        return CloseOutcome::AlreadyClosed;
    it->state = SimTrade::State::Closed;
    return CloseOutcome::Closed;
}

SimState::RefundOutcome SimState::refund(const SimRefund &proposed, SimRefund *result)
{
    const QString refundKey = key(proposed.channel, proposed.outRefundNo);
    auto trade = m_trades.end();
    for (auto it = m_trades.begin(); it != m_trades.end(); ++it) {
        if (it->channel != proposed.channel)
            continue;
        if (proposed.payNo.isEmpty() ? it->outTradeNo == proposed.outTradeNo : it->payNo == proposed.payNo) {
            trade = it;
            break;
        }
    }
    if (auto existing = m_refunds.constFind(refundKey); existing != m_refunds.constEnd()) {
        *result = *existing;
        const bool sameTrade = trade != m_trades.end() && existing->outTradeNo == trade->outTradeNo;
        return sameTrade && existing->amountFen == proposed.amountFen ? RefundOutcome::Existing
                                                                      : RefundOutcome::RefundNoReused;
    }
    if (trade == m_trades.end())
        return RefundOutcome::TradeNotFound;
    if (trade->state != SimTrade::State::Paid)
        return RefundOutcome::NotPaid;
    if (proposed.totalFen > 0 && proposed.totalFen != trade->amountFen)
        return RefundOutcome::TotalDiffers;
    if (proposed.amountFen <= 0 || proposed.amountFen > trade->amountFen - trade->refundedFen)
        return RefundOutcome::OverRefund;

    SimRefund refund = proposed;
    refund.outTradeNo = trade->outTradeNo;
    refund.payNo = trade->payNo;
    refund.totalFen = trade->amountFen;
    if (refund.notifyUrl.isEmpty() && refund.channel == core::Channel::Alipay)
        refund.notifyUrl = trade->notifyUrl; // Alipay notifies refunds at the trade's notify_url
    // refund_id: WeChat's are 29 digits from 50.
    QString digits;
    for (int i = 0; i < 27; ++i)
        digits += QChar(u'0' + QRandomGenerator::global()->bounded(10));
    refund.refundId = QStringLiteral("50") + digits;
    refund.state = SimRefund::State::Processing;
    refund.createdAt = QDateTime::currentDateTimeUtc();
    trade->refundedFen += refund.amountFen;
    trade->refundNos.append(refund.outRefundNo);
    m_refunds.insert(refundKey, refund);
    ++m_refundsCreated[refund.channel];
    *result = refund;
    return RefundOutcome::Created;
}

bool SimState::finishRefund(core::Channel channel, const QString &outRefundNo, bool failed)
{
    auto refund = m_refunds.find(key(channel, outRefundNo));
    if (refund == m_refunds.end() || refund->state != SimRefund::State::Processing)
        return false;
    auto trade = m_trades.find(key(channel, refund->outTradeNo));
    if (trade == m_trades.end())
        return false;
    // A failure is final here (CLOSED): ABNORMAL would wait for manual handling.
    refund->state = failed ? SimRefund::State::Closed : SimRefund::State::Success;
    refund->finishedAt = QDateTime::currentDateTimeUtc();
    if (failed)
        trade->refundedFen -= refund->amountFen; // nothing went back: refundable again
    else
        m_refundedFen[channel] += refund->amountFen;
    Q_EMIT refundFinished(*refund, *trade);
    return true;
}

std::optional<SimRefund> SimState::findRefund(core::Channel channel, const QString &outRefundNo) const
{
    auto it = m_refunds.constFind(key(channel, outRefundNo));
    if (it == m_refunds.constEnd())
        return std::nullopt;
    return *it;
}

QList<SimRefund> SimState::refundsOf(const SimTrade &trade) const
{
    QList<SimRefund> refunds;
    for (const QString &no : trade.refundNos) {
        if (auto r = findRefund(trade.channel, no))
            refunds.append(*r);
    }
    return refunds;
}

void SimState::reset()
{
    m_refunds.clear();
    m_refundCalls.clear();
    m_refundsCreated.clear();
    m_refundedFen.clear();
    m_trades.clear();
    m_faults.clear();
    m_ordersCreated.clear();
    m_signatureFailures.clear();
    m_requests.clear();
}

} // namespace payonce::sim
