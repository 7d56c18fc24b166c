#include "core/settlement/patrolrunner.h"

#include "core/settlement/patrol.h"

namespace payonce::core {

Result<std::optional<QList<StoredFinding>>> PatrolRunner::tryRun(qint64 nowMs)
{
    std::unique_lock<std::mutex> turn(m_running, std::try_to_lock);
    if (!turn.owns_lock())
        return std::optional<QList<StoredFinding>>();
    const qint64 at = std::max(nowMs, m_lastRunMs + 1);
    m_lastRunMs = at;
    auto findings = m_patrol.runOnce(at);
    if (!findings)
        return findings.error();
    return std::optional<QList<StoredFinding>>(std::move(findings).value());
}

} // namespace payonce::core
