#pragma once

#include "core/ports/patrolstore.h"
#include "core/ports/paymentgateway.h"
#include "core/settlement/patrol.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QPair>

namespace payonce::core {

/// One order stuck in PAYING, settled by asking its platforms (Patrol::settleStuckOrder): a
/// trade paid anywhere is settled through the callback path's transaction; paid nowhere,
/// every trade is closed first and the order reverts to PENDING with its payments
/// renumbered. Every answer is the run's JSON verdict (action, why, attempts, renumbered).
class StuckPayingSettlement {
public:
    StuckPayingSettlement(const StuckPayingOrder &order, const PatrolSettlement &settlement, PatrolStore &store,
                          qint64 nowMs);

    QJsonObject verdict(const QString &action, const QString &why) const;
    /// Asks, then finishes, closes and reverts, or leaves the order with the reason.
    QJsonObject run();

private:
    struct OpenTrade {
        const StuckPayingOrder::Attempt *attempt;
        PaymentGateway *gateway;
    };
    /// Queries each attempt: *settled when one was paid (and settled), else the reason it is
    /// unclear (empty: every trade open, in *open).
    QString askPlatforms(QList<OpenTrade> *open, std::optional<QJsonObject> *settled);
    /// Settles a payment the platform confirmed, through the callback path's transaction.
    QJsonObject finish(const StuckPayingOrder::Attempt &attempt, const GatewayTrade &trade);
    QJsonObject closeAndRevert(const QList<OpenTrade> &open);

    const StuckPayingOrder &m_order;
    const PatrolSettlement &m_settlement;
    PatrolStore &m_store;
    const qint64 m_nowMs;
    QJsonArray m_attempts;
    QJsonArray m_renumberedJson;
};

} // namespace payonce::core
