#include "core/settlement/ordercloser.h"

#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
#include "core/ports/auditwriter.h"
#include "core/ports/callbackmodestore.h"
#include "core/ports/paymentgateway.h"

#include "logging/categories.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::core {

namespace {

const QString kActor = QStringLiteral("system:closer");

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

} // namespace

Result<std::optional<OrderCloser::Report>> OrderCloser::tryRunOnce(qint64 nowMs)
{
    std::unique_lock<std::mutex> turn(m_running, std::try_to_lock);
    if (!turn.owns_lock())
        return std::optional<Report>();
    auto report = runOnce(nowMs);
    if (!report)
        return report.error();
    return std::optional<Report>(std::move(report).value());
}

Result<OrderCloser::Report> OrderCloser::runOnce(qint64 nowMs)
{
    Report report;
    if (m_options.pendingTimeoutMs <= 0)
        return report;
    if (m_ports.modes) {
        auto mode = m_ports.modes->mode();
        if (!mode)
            return mode.error();
        // A payment may be durable as an `accepted` row nobody processes until the mode
        // returns to normal: closing now would turn it into a double payment.
        if (mode.value().mode == CallbackMode::AcceptOnly) {
            qCInfo(payonce::lcCore) << "closer: callbacks are in accept-only mode; no order is closed in this run";
            report.acceptOnly = true;
            return report;
        }
    }
    ExpiredOrderCursor cursor;
    for (;;) {
        auto page = m_store.expiredPending(nowMs - m_options.pendingTimeoutMs, cursor, m_options.pageSize);
        if (!page)
            return page.error();
        for (const ExpiredOrder &order : page.value()) {
            cursor = {order.pendingSinceMs, order.orderNo};
            OrderOutcome outcome = closeOne(order, nowMs);
            if (outcome.action == QLatin1String("closed"))
                ++report.closed;
            else if (outcome.action == QLatin1String("settled"))
                ++report.settled;
            else if (outcome.action == QLatin1String("moved_on"))
                ++report.movedOn;
            else
                ++report.left;
            // Why an order stays PENDING is worth a line; a race lost to another closer is not.
            if (outcome.action == QLatin1String("left") || outcome.action == QLatin1String("settled"))
                qCInfo(payonce::lcCore).noquote()
                    << QStringLiteral("closer: order %1 %2: %3").arg(order.orderNo, outcome.action, outcome.why);
            else if (outcome.action == QLatin1String("moved_on"))
                qCDebug(payonce::lcCore).noquote()
                    << QStringLiteral("closer: order %1 %2: %3").arg(order.orderNo, outcome.action, outcome.why);
            report.orders.append(std::move(outcome));
        }
        if (page.value().size() < m_options.pageSize)
            break;
    }
    return report;
}

OrderCloser::OrderOutcome OrderCloser::closeOne(const ExpiredOrder &order, qint64 nowMs)
{
    auto outcome = [&](const QString &action, const QString &why) { return OrderOutcome{order.orderNo, action, why}; };
    if (order.callbackWaiting)
        return outcome(QStringLiteral("left"), QStringLiteral("a payment callback for it is accepted and waiting"));

    // Every trade is closed at its platform before the order is: nothing can be paid for
    // a CLOSED order afterwards. A close refused as Conflict found the trade paid.
    QJsonArray closedTrades;
    for (const ExpiredOrder::Trade &trade : order.trades) {
        PaymentGateway *gateway = m_ports.gateways ? m_ports.gateways(trade.channel) : nullptr;
        if (!gateway || !m_ports.callbacks)
            return outcome(
                QStringLiteral("left"),
                QStringLiteral("no %1 gateway to close %2 at").arg(channelName(trade.channel), trade.paymentNo));
        auto closed = gateway->close(trade.paymentNo);
        if (!closed && closed.error().code == ErrorCode::Conflict) {
            auto paid = gateway->query(trade.paymentNo);
            if (!paid)
                return outcome(QStringLiteral("left"),
                               QStringLiteral("%1 refused to close %2 (%3) and the query failed: %4")
                                   .arg(channelName(trade.channel), trade.paymentNo, closed.error().internalMessage,
                                        paid.error().internalMessage));
            if (paid.value().state != GatewayTradeState::Paid)
                return outcome(QStringLiteral("left"),
                               QStringLiteral("%1 refused to close %2 (%3) but does not say paid")
                                   .arg(channelName(trade.channel), trade.paymentNo, closed.error().internalMessage));
            const CallbackOutcome settled = m_ports.callbacks->settleConfirmed(
                confirmedByQuery(trade.channel, trade.paymentNo, paid.value()));
            if (!settled.success() || CallbackWorker::leavesTheRowAccepted(settled))
                return outcome(QStringLiteral("left"),
                               QStringLiteral("paid at %1 as %2, not settled: %3 %4")
                                   .arg(channelName(trade.channel), paid.value().payNo, settled.note, settled.message));
            // "processed": this call made the order PAID; otherwise another path did a moment earlier.
            if (settled.note == QLatin1String("processed") && m_ports.audit) {
                auto audited = m_ports.audit->append(
                    {kActor, QStringLiteral("order.close_found_paid"), QStringLiteral("order:") + order.orderNo,
                     compact({{QStringLiteral("status"), QStringLiteral("PENDING")}}),
                     compact({{QStringLiteral("status"), QStringLiteral("PAID")},
                              {QStringLiteral("pay_no"), paid.value().payNo},
                              {QStringLiteral("payment_no"), trade.paymentNo},
                              {QStringLiteral("channel"), channelName(trade.channel)}}),
                     QStringLiteral("closing an expired order: the platform's query says paid"), QString()});
                if (!audited)
                    qCWarning(payonce::lcCore) << "closer: audit row not written:" << audited.error().internalMessage;
            }
            return outcome(QStringLiteral("settled"),
                           QStringLiteral("%1 says %2 was paid (%3): %4")
                               .arg(channelName(trade.channel), trade.paymentNo, paid.value().payNo, settled.note));
        }
        if (!closed)
            return outcome(QStringLiteral("left"),
                           QStringLiteral("closing %1 at %2 failed: %3")
                               .arg(trade.paymentNo, channelName(trade.channel), closed.error().internalMessage));
        closedTrades.append(QJsonObject{{QStringLiteral("payment_no"), trade.paymentNo},
                                        {QStringLiteral("channel"), channelName(trade.channel)},
                                        {QStringLiteral("record_status"), trade.status}});
    }

    const QString why = QStringLiteral("not paid within %1 s").arg(m_options.pendingTimeoutMs / 1000);
    const AuditEntry audit{kActor,
                           QStringLiteral("order.close"),
                           QStringLiteral("order:") + order.orderNo,
                           compact({{QStringLiteral("status"), QStringLiteral("PENDING")},
                                    {QStringLiteral("version"), order.version},
                                    {QStringLiteral("pending_since_ms"), order.pendingSinceMs}}),
                           compact({{QStringLiteral("status"), QStringLiteral("CLOSED")},
                                    {QStringLiteral("closed_trades"), closedTrades}}),
                           why,
                           QString()};
    auto closed = m_store.closeExpired(order, audit, nowMs);
    if (!closed)
        return outcome(QStringLiteral("left"),
                       QStringLiteral("the close transaction failed: %1").arg(closed.error().internalMessage));
    if (!closed.value())
        return outcome(QStringLiteral("moved_on"), QStringLiteral("the order changed while it was being closed"));
    return outcome(QStringLiteral("closed"), why);
}

} // namespace payonce::core
