#pragma once

#include "core/common/result.h"
#include "core/settlement/finding.h"

#include <QList>

#include <mutex>
#include <optional>

namespace payonce::core {

class Patrol;

/// Runs the patrol for its timer and for the operator's POST /api/v1/reconciliation/run,
/// one run at a time per agent: a run asked for while another is going does nothing and
/// says so (the route answers 409 patrol_running) instead of queueing behind it. Patrol
/// wants its clock to grow from run to run; two runs inside one millisecond get now + 1.
/// Thread-safe; the run happens on the calling thread (never the HTTP event loop).
class PatrolRunner {
public:
    explicit PatrolRunner(Patrol &patrol) : m_patrol(patrol) {}

    /// The findings of this run, or nullopt when another run was going.
    Result<std::optional<QList<StoredFinding>>> tryRun(qint64 nowMs);

private:
    Patrol &m_patrol;
    std::mutex m_running;
    qint64 m_lastRunMs = 0; ///< guarded by m_running
};

} // namespace payonce::core
