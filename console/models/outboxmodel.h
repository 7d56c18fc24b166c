#pragma once

#include "jsontablemodel.h"

namespace payonce::console {

/// GET /api/v1/outbox?status=…: the events waiting to reach the webhooks (pending) or given
/// up after max_attempts (dead), with their last error. A re-driven event is marked: its
/// "Re-driven" cell says so and its row is tinted, whatever status it has reached since.
class OutboxModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit OutboxModel(QObject *parent = nullptr);

    int rowOfId(qint64 id) const;

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

} // namespace payonce::console
