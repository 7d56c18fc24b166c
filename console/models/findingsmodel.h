#pragma once

#include "jsontablemodel.h"

namespace payonce::console {

/// GET /api/v1/findings: what the patrol (or the callback path) found, with its evidence.
class FindingsModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit FindingsModel(QObject *parent = nullptr);
};

} // namespace payonce::console
