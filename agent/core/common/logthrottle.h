#pragma once

#include <QtGlobal>

#include <chrono>
#include <mutex>

namespace payonce::core {

/// Lets one occurrence of a log line through per interval and counts the others: for
/// warnings that every request hits during an outage (the key store unreachable, the
/// database down). Thousands of lines a second would fill the log's pipe or journald's
/// budget and block the very threads that log; their counters (/metrics) count every
/// occurrence, the log keeps one line a second that says how many it held back.
/// Thread-safe.
class LogThrottle {
public:
    explicit LogThrottle(std::chrono::milliseconds interval = std::chrono::seconds(1)) : m_interval(interval.count()) {}

    /// True when the occurrence at `nowMs` is to be logged; then *heldBack is how many were
    /// not logged since the last one that was (0 for the first).
    bool admit(qint64 nowMs, qint64 *heldBack)
    {
        std::lock_guard lock(m_mutex);
        if (m_loggedOnce && nowMs - m_lastLoggedMs < m_interval) {
            ++m_heldBack;
            return false;
        }
        *heldBack = m_heldBack;
        m_heldBack = 0;
        m_lastLoggedMs = nowMs;
        m_loggedOnce = true;
        return true;
    }

private:
    const qint64 m_interval;
    std::mutex m_mutex;
    bool m_loggedOnce = false;
    qint64 m_lastLoggedMs = 0;
    qint64 m_heldBack = 0;
};

} // namespace payonce::core
