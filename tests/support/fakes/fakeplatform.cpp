#include "fakeplatform.h"

#include <QRandomGenerator>

#include <thread>

namespace payonce::testsupport {

using namespace payonce::core;

void FakePlatform::set(const QString &paymentNo, Trade trade)
{
    std::lock_guard guard(m_mutex);
    m_trades[paymentNo] = std::move(trade);
}

FakePlatform::Trade FakePlatform::trade(const QString &paymentNo)
{
    std::lock_guard guard(m_mutex);
    return m_trades[paymentNo];
}

QStringList FakePlatform::calls()
{
    std::lock_guard guard(m_mutex);
    return m_calls;
}

void FakePlatform::setOnClose(std::function<void(const QString &)> onClose)
{
    std::lock_guard guard(m_mutex);
    m_onClose = std::move(onClose);
}

Result<GatewayOrder> FakePlatform::createOrder(const GatewayOrderRequest &)
{
    return Error::make(ErrorCode::Internal, QStringLiteral("settling and closing never create trades"));
}

Result<GatewayTrade> FakePlatform::query(const QString &paymentNo)
{
    if (m_queryDelay.count() > 0)
        std::this_thread::sleep_for(m_queryDelay * QRandomGenerator::global()->bounded(1, 4));
    std::lock_guard guard(m_mutex);
    m_calls.append(QStringLiteral("query ") + paymentNo);
    const Trade &t = m_trades[paymentNo];
    if (t.queryFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
    GatewayTrade out;
    out.state = t.state;
    if (t.state == GatewayTradeState::Paid) {
        out.payNo = t.payNo;
        out.amountFen = m_paidAmountFen;
    }
    return out;
}

Result<GatewayRefund> FakePlatform::refund(const GatewayRefundRequest &request)
{
    std::lock_guard guard(m_mutex);
    ++m_refundCalls[request.refundNo];
    m_refundRequests[request.refundNo] = request;
    QList<Result<GatewayRefund>> &answers = m_refundAnswers[request.refundNo];
    if (!answers.isEmpty())
        return answers.takeFirst();
    return madeRefund(request.refundNo, GatewayRefundState::Processing);
}

Result<GatewayRefund> FakePlatform::queryRefund(const QString &, const QString &refundNo)
{
    std::lock_guard guard(m_mutex);
    const auto found = m_queriedRefunds.find(refundNo);
    return madeRefund(refundNo, found == m_queriedRefunds.end() ? GatewayRefundState::Processing : found->second);
}

void FakePlatform::queueRefundAnswer(const QString &refundNo, Result<GatewayRefund> answer)
{
    std::lock_guard guard(m_mutex);
    m_refundAnswers[refundNo].append(std::move(answer));
}

void FakePlatform::setQueriedRefundState(const QString &refundNo, GatewayRefundState state)
{
    std::lock_guard guard(m_mutex);
    m_queriedRefunds[refundNo] = state;
}

int FakePlatform::refundCalls(const QString &refundNo)
{
    std::lock_guard guard(m_mutex);
    return m_refundCalls[refundNo];
}

GatewayRefundRequest FakePlatform::lastRefundRequest(const QString &refundNo)
{
    std::lock_guard guard(m_mutex);
    return m_refundRequests[refundNo];
}

GatewayRefund FakePlatform::madeRefund(const QString &refundNo, GatewayRefundState state)
{
    GatewayRefund r;
    r.state = state;
    r.refundNo = refundNo;
    r.refundId = QStringLiteral("5030") + refundNo.right(8);
    return r;
}

Result<void> FakePlatform::close(const QString &paymentNo)
{
    std::function<void(const QString &)> onClose;
    {
        std::lock_guard guard(m_mutex);
        onClose = m_onClose;
    }
    if (onClose)
        onClose(paymentNo);
    std::lock_guard guard(m_mutex);
    m_calls.append(QStringLiteral("close ") + paymentNo);
    Trade &t = m_trades[paymentNo];
    if (t.closeFails)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("platform timeout"));
    if (t.payOnClose)
        t.state = GatewayTradeState::Paid;
    if (t.state == GatewayTradeState::Paid)
        return Error::make(ErrorCode::Conflict, QStringLiteral("ORDERPAID"));
    t.state = GatewayTradeState::Closed;
    return {};
}

} // namespace payonce::testsupport
