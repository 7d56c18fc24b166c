#pragma once

#include "jsontablemodel.h"

namespace payonce::console {

/// GET /api/v1/compensations: the proposal queue and the decided ones, with who
/// proposed, who decided, why, and the executed effect ("result").
class CompensationsModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit CompensationsModel(QObject *parent = nullptr);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

} // namespace payonce::console
