#pragma once

#include "core/gateways/breakermode.h"

#include <QString>

#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

namespace payonce::core {

class BreakerModeStore;
class Clock;

enum class BreakerState {
    Closed,
    Open,
    HalfOpen
};

/// "closed", "open", "half_open".
QString breakerStateName(BreakerState state);

struct CircuitBreakerOptions {
    /// Calls older than this slide out of the failure rate.
    std::chrono::milliseconds window{std::chrono::seconds(30)};
    /// Below this many calls in the window the breaker never opens.
    int minimumCalls = 10;
    /// Opens when failures / calls >= this (0..1).
    double failureRateThreshold = 0.5;
    /// How long it stays open before letting probes through.
    std::chrono::milliseconds openCooldown{std::chrono::seconds(30)};
    /// How many probes half-open admits; all must succeed to close.
    int halfOpenProbes = 3;
    /// How often the operator mode is re-read from the mode store.
    std::chrono::milliseconds modeRefresh{std::chrono::seconds(1)};
};

/// What an admitted call reports back through onResult().
struct BreakerPermit {
    bool probe = false;     ///< admitted as one of half-open's probes
    quint64 generation = 0; ///< the breaker's state generation at admission
    bool counted = true;    ///< false under forced_closed: the result is not counted
};

/// What the operator API shows (GET /api/v1/breakers).
struct BreakerSnapshot {
    QString name;
    BreakerState state = BreakerState::Closed;
    BreakerModeSetting mode; ///< the stored setting (mode Auto when none or expired)
    BreakerMode effectiveMode = BreakerMode::Auto;
    double failureRate = 0.0; ///< over the current window
    int calls = 0;            ///< in the current window
    qint64 stateChangedAtMs = 0;

    /// What callers meet: a forced mode decides whatever the failure rate says, so an
    /// operator sees "open" for forced_open and "closed" for forced_closed.
    BreakerState effectiveState() const
    {
        switch (effectiveMode) {
        case BreakerMode::ForcedOpen: return BreakerState::Open;
        case BreakerMode::ForcedClosed: return BreakerState::Closed;
        case BreakerMode::Auto: break;
        }
        return state;
    }
};

/// A circuit breaker on the Clock port (docs/design.md, "Circuit breakers").
///
/// Closed: calls go through; the outcomes of the last `window` are kept, and once there
/// are at least `minimumCalls` of them with a failure rate >= the threshold it opens.
/// Open: tryAcquire() refuses until `openCooldown` has passed, then half-open.
/// Half-open: exactly `halfOpenProbes` calls are admitted (concurrent callers included);
/// the rest are refused. One probe failure reopens at once; when all probes succeed it
/// closes with an empty window. Results of calls admitted before a state change are
/// ignored (the generation tells).
///
/// Operator modes: forced_open refuses everything, forced_closed admits everything and
/// counts nothing, both until their expiry, then auto again. With a BreakerModeStore the
/// mode is re-read at most every `modeRefresh` on tryAcquire() (and on snapshot()), so
/// every agent sharing the store obeys within that time; a store that cannot be read
/// leaves the last known mode in force. setLocalMode() applies a setting at once (after
/// the operator's write).
///
/// Thread-safe: tryAcquire()/onResult() from any thread. The mode store is read outside
/// the breaker's mutex, by one caller at a time.
class CircuitBreaker {
public:
    CircuitBreaker(QString name, const Clock &clock, BreakerModeStore *modes = nullptr,
                   CircuitBreakerOptions options = {});

    const QString &name() const { return m_name; }

    /// A permit when the call may go ahead, nothing when the breaker refuses it.
    std::optional<BreakerPermit> tryAcquire();
    /// Reports an admitted call's outcome (success: the dependency answered).
    void onResult(const BreakerPermit &permit, bool success);

    BreakerState state();
    BreakerSnapshot snapshot();
    void setLocalMode(const BreakerModeSetting &setting);
    /// Re-reads the mode store now (the registry's timer, tests).
    void refreshMode();

private:
    void refreshModeIfDue();
    void pruneLocked(qint64 now);
    void transitionLocked(BreakerState to, qint64 now);
    void advanceLocked(qint64 now);

    struct Call {
        qint64 atMs;
        bool success;
    };

    const QString m_name;
    const Clock &m_clock;
    BreakerModeStore *m_modes;
    const CircuitBreakerOptions m_options;

    std::mutex m_mutex;
    BreakerState m_state = BreakerState::Closed;
    quint64 m_generation = 0;
    qint64 m_stateChangedAtMs = 0;
    std::deque<Call> m_calls;
    int m_probesAdmitted = 0;
    int m_probesSucceeded = 0;
    BreakerModeSetting m_mode;
    qint64 m_modeReadAtMs = 0;
    bool m_modeEverRead = false;
    bool m_modeRefreshing = false;
};

} // namespace payonce::core
