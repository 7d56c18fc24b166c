#include "core/settlement/stuckpaying_p.h"

#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
#include "core/confirm/paymentrecord.h"
#include "core/ports/auditwriter.h"

#include <QJsonDocument>

namespace payonce::core {

namespace {

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

} // namespace

StuckPayingSettlement::StuckPayingSettlement(const StuckPayingOrder &order, const PatrolSettlement &settlement,
                                             PatrolStore &store, qint64 nowMs)
    : m_order(order), m_settlement(settlement), m_store(store), m_nowMs(nowMs)
{
    for (const StuckPayingOrder::Attempt &attempt : order.attempts) {
        m_attempts.append(QJsonObject{{QStringLiteral("payment_no"), attempt.paymentNo},
                                      {QStringLiteral("channel"), channelName(attempt.channel)},
                                      {QStringLiteral("record_status"), attempt.status}});
    }
}

QJsonObject StuckPayingSettlement::verdict(const QString &action, const QString &why) const
{
    return QJsonObject{{QStringLiteral("action"), action},
                       {QStringLiteral("why"), why},
                       {QStringLiteral("attempts"), m_attempts},
                       {QStringLiteral("renumbered"), m_renumberedJson}};
}

QJsonObject StuckPayingSettlement::run()
{
    QList<OpenTrade> open;
    std::optional<QJsonObject> settled;
    const QString unclear = askPlatforms(&open, &settled);
    if (settled)
        return *settled;
    if (!unclear.isEmpty())
        return verdict(QStringLiteral("left"), unclear);
    return closeAndRevert(open);
}

QString StuckPayingSettlement::askPlatforms(QList<OpenTrade> *openTrades, std::optional<QJsonObject> *settled)
{
    QList<OpenTrade> &open = *openTrades;
    QString unclear;
    for (qsizetype i = 0; i < m_order.attempts.size(); ++i) {
        const StuckPayingOrder::Attempt &attempt = m_order.attempts.at(i);
        QJsonObject seen = m_attempts.at(i).toObject();
        PaymentGateway *gateway = m_settlement.gateways(attempt.channel);
        auto trade = gateway
                         ? gateway->query(attempt.paymentNo)
                         : Result<GatewayTrade>(Error::make(ErrorCode::Misconfigured, QStringLiteral("no gateway")));
        if (!trade) {
            seen.insert(QStringLiteral("gateway_state"), QStringLiteral("unknown"));
            seen.insert(QStringLiteral("error"), trade.error().internalMessage);
            m_attempts.replace(i, seen);
            unclear = QStringLiteral("the %1 query failed: %2")
                          .arg(channelName(attempt.channel), trade.error().internalMessage);
            continue;
        }
        seen.insert(QStringLiteral("gateway_state"), tradeStateName(trade.value().state));
        m_attempts.replace(i, seen);
        switch (trade.value().state) {
        case GatewayTradeState::Paid: *settled = finish(attempt, trade.value()); return {};
        case GatewayTradeState::Refunded:
            unclear = QStringLiteral("%1 says refunded while the order is PAYING").arg(channelName(attempt.channel));
            break;
        case GatewayTradeState::NotFound:
        case GatewayTradeState::NotPaid:
        case GatewayTradeState::Closed: open.append({&attempt, gateway}); break;
        }
    }
    return unclear;
}

QJsonObject StuckPayingSettlement::finish(const StuckPayingOrder::Attempt &attempt, const GatewayTrade &trade)
{
    // Audited in the transaction that makes the order PAID: both or neither.
    SettledInTransaction audit;
    if (m_settlement.audit) {
        audit = [&](const CallbackOutcome &settled) -> Result<void> {
            if (settled.note != QLatin1String("processed"))
                return {};
            auto audited = m_settlement.audit->append(
                {QStringLiteral("system:patrol"), QStringLiteral("patrol.finish_paying"),
                 QStringLiteral("order:") + m_order.orderNo,
                 compact({{QStringLiteral("status"), QStringLiteral("PAYING")}}),
                 compact({{QStringLiteral("status"), QStringLiteral("PAID")},
                          {QStringLiteral("pay_no"), trade.payNo},
                          {QStringLiteral("payment_no"), attempt.paymentNo},
                          {QStringLiteral("channel"), channelName(attempt.channel)}}),
                 QStringLiteral("PAYING for %1 s; the platform's query says paid")
                     .arg((m_nowMs - m_order.payingSinceMs) / 1000),
                 QString()});
            if (!audited)
                return audited.error();
            return {};
        };
    }
    const CallbackOutcome outcome = m_settlement.callbacks->settleConfirmed(
        confirmedByQuery(attempt.channel, attempt.paymentNo, trade), audit);
    QJsonObject out = verdict(QString(), outcome.message);
    out.insert(QStringLiteral("pay_no"), trade.payNo);
    out.insert(QStringLiteral("outcome"), outcome.note);
    out.insert(QStringLiteral("layer"), layerName(outcome.layer));
    if (!outcome.success()) {
        out.insert(QStringLiteral("action"), QStringLiteral("left"));
        return out;
    }
    if (CallbackWorker::leavesTheRowAccepted(outcome)) {
        // Acknowledged behind a durable log row without being settled (its lock is held
        // elsewhere, or was lost): the callback worker or the next run finishes it.
        out.insert(QStringLiteral("action"), QStringLiteral("left"));
        out.insert(QStringLiteral("why"), QStringLiteral("the platform's query says paid; the log row is durable, "
                                                         "settling it waits for its lock (%1)")
                                              .arg(outcome.note));
        return out;
    }
    // "processed": this call made the order PAID; anything else means another path
    // (the late callback, another agent's patrol) settled it a moment earlier.
    const bool byUs = outcome.note == QLatin1String("processed");
    out.insert(QStringLiteral("action"), byUs ? QStringLiteral("finished") : QStringLiteral("settled_elsewhere"));
    out.insert(QStringLiteral("why"), QStringLiteral("the platform's query says paid"));
    return out;
}

QJsonObject StuckPayingSettlement::closeAndRevert(const QList<OpenTrade> &open)
{
    QList<QPair<QString, QString>> renumbered;
    // Paid nowhere. Close every trade before the order reverts, so nothing can be paid
    // for it afterwards; a close refused because the trade was paid meanwhile settles it.
    for (const OpenTrade &trade : open) {
        const QString &paymentNo = trade.attempt->paymentNo;
        auto closed = trade.gateway->close(paymentNo);
        if (!closed) {
            if (closed.error().code == ErrorCode::Conflict) {
                auto again = trade.gateway->query(paymentNo);
                if (again && again.value().state == GatewayTradeState::Paid)
                    return finish(*trade.attempt, again.value());
            }
            return verdict(QStringLiteral("left"),
                           QStringLiteral("closing %1 at %2 failed: %3")
                               .arg(paymentNo, channelName(trade.attempt->channel), closed.error().internalMessage));
        }
        renumbered.append({paymentNo, newPaymentNo()});
        m_renumberedJson.append(
            QJsonObject{{QStringLiteral("from"), paymentNo}, {QStringLiteral("to"), renumbered.last().second}});
    }
    const QString why = QStringLiteral("not paid after %1 s in PAYING; closed at the platform by the patrol")
                            .arg((m_nowMs - m_order.payingSinceMs) / 1000);
    // Audited in the revert's own transaction: both or neither.
    InTransaction audit;
    if (m_settlement.audit) {
        audit = [&]() -> Result<void> {
            QJsonArray before;
            for (const auto &[from, to] : renumbered)
                before.append(from);
            auto audited = m_settlement.audit->append({QStringLiteral("system:patrol"),
                                                       QStringLiteral("patrol.revert_paying"),
                                                       QStringLiteral("order:") + m_order.orderNo,
                                                       compact({{QStringLiteral("status"), QStringLiteral("PAYING")},
                                                                {QStringLiteral("payment_nos"), before}}),
                                                       compact({{QStringLiteral("status"), QStringLiteral("PENDING")},
                                                                {QStringLiteral("renumbered"), m_renumberedJson}}),
                                                       why, QString()});
            if (!audited)
                return audited.error();
            return {};
        };
    }
    auto reverted = m_store.revertPaying(m_order.orderNo, renumbered, why, m_nowMs, audit);
    if (!reverted)
        return verdict(QStringLiteral("left"),
                       QStringLiteral("revert failed: %1").arg(reverted.error().internalMessage));
    if (!reverted.value())
        return verdict(QStringLiteral("left"), QStringLiteral("the order moved on while the patrol asked"));
    return verdict(QStringLiteral("reverted"), why);
}

} // namespace payonce::core
