#pragma once

#include <QJsonObject>
#include <QMap>
#include <QString>

namespace payonce::core {

/// The invariant report, computed by SQL over one scenario's orders (the order_no prefix).
struct ScenarioReport {
    qint64 orders = 0;
    qint64 deliveries = 0;         ///< callback_deliveries rows for the scenario's orders
    qint64 paidOnce = 0;           ///< PAID with exactly one successful payment record
    qint64 doubleEffects = 0;      ///< orders with any stock, coupon or points effect more than owed
    qint64 missingEffects = 0;     ///< PAID orders lacking an effect they are owed
    qint64 lost = 0;               ///< orders the platform was paid for and that are not PAID
    qint64 outboxPending = 0;      ///< order.paid events not yet delivered (0 once drained)
    QMap<QString, qint64> byLayer; ///< callback deliveries by deciding layer
    /// Confirms by X-Payonce-Layer ("/<status>" unless 200), as the runner saw them.
    QMap<QString, qint64> confirmLayers;

    bool passed() const
    {
        return orders > 0 && paidOnce == orders && doubleEffects == 0 && missingEffects == 0 && lost == 0;
    }
    QJsonObject toJson() const;
};

} // namespace payonce::core
