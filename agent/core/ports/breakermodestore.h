#pragma once

#include "core/common/result.h"
#include "core/gateways/breakermode.h"

#include <QHash>
#include <QString>

namespace payonce::core {

/// Operator modes of the circuit breakers, shared by every agent (the database's
/// `settings` table), so that one operator's forced_open is obeyed everywhere.
///
/// all() returns every breaker that has a stored setting, by breaker name
/// ("gateway.wechat"); a breaker without one is Auto. set() stores (replaces) one
/// breaker's setting with its actor, reason and expiry; it is idempotent and safe to
/// retry. Expiry is applied by the readers (BreakerModeSetting::effectiveAt), so nothing
/// needs to run at the expiry instant. Thread-safe.
class BreakerModeStore {
public:
    virtual ~BreakerModeStore() = default;
    virtual Result<QHash<QString, BreakerModeSetting>> all() = 0;
    virtual Result<void> set(const QString &breaker, const BreakerModeSetting &setting) = 0;
};

} // namespace payonce::core
