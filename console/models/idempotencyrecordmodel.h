#pragma once

#include "jsontablemodel.h"

namespace payonce::console {

/// GET /api/v1/idempotency-keys?user_id=&key=: the one record a lookup found (L1 of the
/// five layers) — fingerprint, status, stored response, when it was locked. One row, so it
/// sorts, filters and exports like every other table.
class IdempotencyRecordModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit IdempotencyRecordModel(QObject *parent = nullptr);

    /// The record shown, empty when none.
    QJsonObject record() const { return rowObject(0); }
    /// Why Unlock cannot apply to a record, empty when it may: the agent releases only an
    /// in_flight record past its lock timeout, and only the agent knows its clock and
    /// timeout — so an in_flight record is offered and the agent's answer decides.
    static QString unlockBlocker(const QJsonObject &record);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

} // namespace payonce::console
