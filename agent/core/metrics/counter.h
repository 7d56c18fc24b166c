#pragma once

#include <QtGlobal>

#include <atomic>

namespace payonce::core {

/// A monotonic counter: one relaxed atomic add per event, read at scrape time. Sums from
/// any number of threads are exact (no lost updates); a read sees some recent value.
/// Thread-safe, lock-free. Lives in a MetricsRegistry, which hands out stable references.
class Counter {
public:
    void add(quint64 n = 1) { m_value.fetch_add(n, std::memory_order_relaxed); }
    quint64 value() const { return m_value.load(std::memory_order_relaxed); }

private:
    std::atomic<quint64> m_value{0};
};

} // namespace payonce::core
