#pragma once

#include "jsontablemodel.h"

namespace payonce::console {

/// The deliveries of GET /api/v1/callbacks: when each arrived, its channel, whether its
/// signature verified, and the layer that decided it (in that layer's colour).
class CallbackDeliveriesModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit CallbackDeliveriesModel(QObject *parent = nullptr);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

} // namespace payonce::console
