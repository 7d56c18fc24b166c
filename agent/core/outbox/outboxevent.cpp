#include "core/outbox/outboxevent.h"

namespace payonce::core {

QString outboxStatusName(OutboxStatus status)
{
    switch (status) {
    case OutboxStatus::Pending: return QStringLiteral("pending");
    case OutboxStatus::Delivered: return QStringLiteral("delivered");
    case OutboxStatus::Dead: return QStringLiteral("dead");
    }
    return QStringLiteral("pending");
}

std::optional<OutboxStatus> outboxStatusFromName(const QString &name)
{
    for (OutboxStatus s : {OutboxStatus::Pending, OutboxStatus::Delivered, OutboxStatus::Dead})
        if (outboxStatusName(s) == name)
            return s;
    return std::nullopt;
}

} // namespace payonce::core
