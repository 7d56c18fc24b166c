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
    it->payNo = (channel == core::Channel::WeChat ? QStringLiteral("42000000") : QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd")))
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

void SimState::reset()
{
    m_trades.clear();
    m_faults.clear();
    m_ordersCreated.clear();
    m_signatureFailures.clear();
    m_requests.clear();
}

} // namespace payonce::sim
