#pragma once

// Shared by the loader (config.cpp: the layers of defaults, file, environment and flags)
// and the builder (configbuilder.cpp: the layered settings checked into a Config).

#include "core/common/error.h"

#include <QJsonValue>
#include <QString>

#include <limits>
#include <optional>

namespace payonce::config {

/// A value as it stands after layering, with where it came from for error messages.
struct Setting {
    QJsonValue value;
    QString origin;
};

inline core::Error misconfigured(const QString &message)
{
    return core::Error::make(core::ErrorCode::Misconfigured, message);
}

/// Integral JSON numbers only; QJsonValue::toInteger refuses 1.5 and out-of-range values.
inline std::optional<qint64> jsonInteger(const QJsonValue &v)
{
    constexpr qint64 sentinel = std::numeric_limits<qint64>::min();
    if (!v.isDouble())
        return std::nullopt;
    const qint64 n = v.toInteger(sentinel);
    if (n == sentinel)
        return std::nullopt;
    return n;
}

} // namespace payonce::config
