#pragma once

#include <QList>
#include <QString>

namespace payonce::core {

/// One lock as this agent saw it.
struct LockView {
    enum class State {
        Held,
        Lost
    };
    QString key;
    QString owner;
    quint64 fencingToken = 0; ///< 0: taken without a fence scope
    QString fenceScope;       ///< the order the token fences; empty: none
    State state = State::Held;
    qint64 acquiredAtMs = 0; ///< wall clock
    qint64 ttlLeftMs = 0;    ///< of the last confirmed lease; 0 once lost
    qint64 renewals = 0;     ///< watchdog renewals confirmed
};

/// The last fencing token this agent took for one fence scope (an order).
struct FenceView {
    QString scope;
    quint64 token = 0;
};

/// What this agent's key store knows about its own locks (GET /api/v1/locks): the leases
/// it holds now, the ones it lost recently (bounded), and the last fencing token it took
/// per order (bounded). Locks of other agents are not seen. Read-only; thread-safe; cheap
/// (in-memory, never a call to the store).
class LockObserver {
public:
    virtual ~LockObserver() = default;
    /// Held leases, then recently lost ones, newest first within each.
    virtual QList<LockView> locks() const = 0;
    /// The last token per scope, newest first.
    virtual QList<FenceView> lastFencingTokens() const = 0;
};

} // namespace payonce::core
