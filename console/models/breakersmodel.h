#pragma once

#include "jsontablemodel.h"

#include <QMap>

namespace payonce::console {

/// GET /api/v1/breakers: state, mode, failure rate, calls, and who forced a mode, why,
/// until when. The state column follows the stream's metrics between two fetches.
class BreakersModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit BreakersModel(QObject *parent = nullptr);

    /// The row of a breaker by name, -1 when unknown.
    int rowOf(const QString &name) const;
    /// Live states from a metrics message (name -> "closed" | "half_open" | "open").
    void applyStates(const QMap<QString, QString> &states);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

} // namespace payonce::console
