#include "core/gateways/circuitbreaker.h"

#include "core/ports/breakermodestore.h"
#include "core/ports/clock.h"

namespace payonce::core {

QString breakerStateName(BreakerState state)
{
    switch (state) {
    case BreakerState::Closed: return QStringLiteral("closed");
    case BreakerState::Open: return QStringLiteral("open");
    case BreakerState::HalfOpen: return QStringLiteral("half_open");
    }
    Q_UNREACHABLE();
}

CircuitBreaker::CircuitBreaker(QString name, const Clock &clock, BreakerModeStore *modes, CircuitBreakerOptions options)
    : m_name(std::move(name)), m_clock(clock), m_modes(modes), m_options(options), m_stateChangedAtMs(clock.nowMs())
{
}

std::optional<BreakerPermit> CircuitBreaker::tryAcquire()
{
    refreshModeIfDue();
    std::lock_guard guard(m_mutex);
    const qint64 now = m_clock.nowMs();
    switch (m_mode.effectiveAt(now)) {
    case BreakerMode::ForcedOpen: return std::nullopt;
    case BreakerMode::ForcedClosed: return BreakerPermit{false, m_generation, false};
    case BreakerMode::Auto: break;
    }
    advanceLocked(now);
    switch (m_state) {
    case BreakerState::Closed: return BreakerPermit{false, m_generation, true};
    case BreakerState::Open: return std::nullopt;
    case BreakerState::HalfOpen:
        if (m_probesAdmitted >= m_options.halfOpenProbes)
            return std::nullopt;
        ++m_probesAdmitted;
        return BreakerPermit{true, m_generation, true};
    }
    Q_UNREACHABLE();
}

void CircuitBreaker::onResult(const BreakerPermit &permit, bool success)
{
    if (!permit.counted)
        return;
    std::lock_guard guard(m_mutex);
    const qint64 now = m_clock.nowMs();
    if (permit.generation != m_generation)
        return; // admitted under another state: its outcome says nothing about this one
    if (m_state == BreakerState::HalfOpen && permit.probe) {
        if (!success) {
            transitionLocked(BreakerState::Open, now);
            return;
        }
        if (++m_probesSucceeded >= m_options.halfOpenProbes)
            transitionLocked(BreakerState::Closed, now);
        return;
    }
    if (m_state != BreakerState::Closed)
        return;
    m_calls.push_back({now, success});
    pruneLocked(now);
    const int calls = int(m_calls.size());
    if (calls < m_options.minimumCalls)
        return;
    int failures = 0;
    for (const Call &call : m_calls)
        failures += call.success ? 0 : 1;
    if (double(failures) >= m_options.failureRateThreshold * double(calls))
        transitionLocked(BreakerState::Open, now);
}

BreakerState CircuitBreaker::state()
{
    std::lock_guard guard(m_mutex);
    advanceLocked(m_clock.nowMs());
    return m_state;
}

BreakerSnapshot CircuitBreaker::snapshot()
{
    refreshModeIfDue();
    std::lock_guard guard(m_mutex);
    const qint64 now = m_clock.nowMs();
    advanceLocked(now);
    pruneLocked(now);
    BreakerSnapshot out;
    out.name = m_name;
    out.state = m_state;
    out.mode = m_mode;
    out.effectiveMode = m_mode.effectiveAt(now);
    if (out.effectiveMode == BreakerMode::Auto)
        out.mode.mode = BreakerMode::Auto; // an expired setting shows as auto
    out.calls = int(m_calls.size());
    int failures = 0;
    for (const Call &call : m_calls)
        failures += call.success ? 0 : 1;
    out.failureRate = out.calls == 0 ? 0.0 : double(failures) / double(out.calls);
    out.stateChangedAtMs = m_stateChangedAtMs;
    return out;
}

void CircuitBreaker::setLocalMode(const BreakerModeSetting &setting)
{
    std::lock_guard guard(m_mutex);
    m_mode = setting;
}

void CircuitBreaker::refreshMode()
{
    if (!m_modes)
        return;
    {
        std::lock_guard guard(m_mutex);
        if (m_modeRefreshing)
            return;
        m_modeRefreshing = true;
    }
    auto all = m_modes->all();
    std::lock_guard guard(m_mutex);
    m_modeRefreshing = false;
    m_modeReadAtMs = m_clock.nowMs();
    m_modeEverRead = true;
    if (!all.ok())
        return; // keep the last known mode: a database hiccup must not flip breakers
    const auto it = all.value().constFind(m_name);
    m_mode = it == all.value().cend() ? BreakerModeSetting{} : it.value();
}

void CircuitBreaker::refreshModeIfDue()
{
    if (!m_modes)
        return;
    {
        std::lock_guard guard(m_mutex);
        const qint64 now = m_clock.nowMs();
        if (m_modeEverRead && now - m_modeReadAtMs < m_options.modeRefresh.count())
            return;
    }
    refreshMode();
}

void CircuitBreaker::pruneLocked(qint64 now)
{
    const qint64 oldest = now - m_options.window.count();
    while (!m_calls.empty() && m_calls.front().atMs <= oldest)
        m_calls.pop_front();
}

void CircuitBreaker::advanceLocked(qint64 now)
{
    if (m_state == BreakerState::Open && now - m_stateChangedAtMs >= m_options.openCooldown.count())
        transitionLocked(BreakerState::HalfOpen, now);
}

void CircuitBreaker::transitionLocked(BreakerState to, qint64 now)
{
    m_state = to;
    ++m_generation;
    m_stateChangedAtMs = now;
    m_calls.clear();
    m_probesAdmitted = 0;
    m_probesSucceeded = 0;
}

} // namespace payonce::core
