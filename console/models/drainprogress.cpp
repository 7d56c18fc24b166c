#include "drainprogress.h"

#include <algorithm>

namespace payonce::console {

bool DrainProgress::apply(const QJsonObject &mode)
{
    const QJsonValue callbacks = mode.value(QStringLiteral("callbacks"));
    const QJsonValue waiting = mode.value(QStringLiteral("accepted_waiting"));
    if (!callbacks.isString() || !waiting.isDouble() || waiting.toDouble() < 0)
        return false;
    const QString newMode = callbacks.toString();
    if (newMode == u"accept_only" && m_mode != u"accept_only")
        m_peak = 0; // a new incident: its own 100 %
    m_mode = newMode;
    m_waiting = waiting.toInteger();
    m_peak = std::max(m_peak, m_waiting);
    m_changedBy = mode.value(QStringLiteral("changed_by")).toString();
    m_reason = mode.value(QStringLiteral("reason")).toString();
    m_changedAt = mode.value(QStringLiteral("changed_at")).toString();
    return true;
}

int DrainProgress::percentDone() const
{
    if (m_waiting <= 0 || m_peak <= 0)
        return 100;
    return int((m_peak - m_waiting) * 100 / m_peak);
}

} // namespace payonce::console
