#include "core/gateways/breakermode.h"

namespace payonce::core {

QString breakerModeName(BreakerMode mode)
{
    switch (mode) {
    case BreakerMode::Auto: return QStringLiteral("auto");
    case BreakerMode::ForcedOpen: return QStringLiteral("forced_open");
    case BreakerMode::ForcedClosed: return QStringLiteral("forced_closed");
    }
    Q_UNREACHABLE();
}

std::optional<BreakerMode> breakerModeFromName(QStringView name)
{
    for (BreakerMode mode : {BreakerMode::Auto, BreakerMode::ForcedOpen, BreakerMode::ForcedClosed}) {
        if (breakerModeName(mode) == name)
            return mode;
    }
    return std::nullopt;
}

} // namespace payonce::core
