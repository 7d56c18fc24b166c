#include "core/metrics/latencyhistogram.h"

#include <algorithm>
#include <cmath>

namespace payonce::core {

QList<double> LatencyHistogram::defaultBounds()
{
    return {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};
}

LatencyHistogram::LatencyHistogram(QList<double> upperBounds)
    : m_bounds(std::move(upperBounds)), m_buckets(std::make_unique<std::atomic<quint64>[]>(m_bounds.size() + 1))
{
    Q_ASSERT(std::is_sorted(m_bounds.begin(), m_bounds.end()));
    for (qsizetype i = 0; i <= m_bounds.size(); ++i)
        m_buckets[i].store(0, std::memory_order_relaxed);
}

void LatencyHistogram::observe(std::chrono::nanoseconds duration)
{
    const qint64 nanos = std::max<qint64>(0, duration.count());
    const double seconds = double(nanos) / 1e9;
    // Bounds are inclusive upper limits (Prometheus "le").
    const auto it = std::lower_bound(m_bounds.cbegin(), m_bounds.cend(), seconds);
    m_buckets[it - m_bounds.cbegin()].fetch_add(1, std::memory_order_relaxed);
    m_sumNanos.fetch_add(quint64(nanos), std::memory_order_relaxed);
}

void LatencyHistogram::observeSeconds(double seconds)
{
    observe(std::chrono::nanoseconds(qint64(std::llround(std::max(0.0, seconds) * 1e9))));
}

LatencyHistogram::Snapshot LatencyHistogram::snapshot() const
{
    Snapshot s;
    s.upperBounds = m_bounds;
    s.cumulative.reserve(m_bounds.size() + 1);
    quint64 running = 0;
    for (qsizetype i = 0; i <= m_bounds.size(); ++i) {
        running += m_buckets[i].load(std::memory_order_relaxed);
        s.cumulative.append(running);
    }
    // _count is the +Inf bucket by construction, so a scrape during observe() stays valid.
    s.count = running;
    s.sumSeconds = double(m_sumNanos.load(std::memory_order_relaxed)) / 1e9;
    return s;
}

double LatencyHistogram::quantile(double q) const
{
    return quantile(snapshot(), q);
}

double LatencyHistogram::quantile(const Snapshot &s, double q)
{
    if (s.count == 0)
        return 0.0;
    const double rank = std::clamp(q, 0.0, 1.0) * double(s.count);
    for (qsizetype i = 0; i < s.upperBounds.size(); ++i) {
        if (double(s.cumulative.at(i)) >= rank) {
            const double lower = i == 0 ? 0.0 : s.upperBounds.at(i - 1);
            const double before = i == 0 ? 0.0 : double(s.cumulative.at(i - 1));
            const double inBucket = double(s.cumulative.at(i)) - before;
            if (inBucket <= 0)
                return lower;
            return lower + (s.upperBounds.at(i) - lower) * (rank - before) / inBucket;
        }
    }
    return s.upperBounds.isEmpty() ? 0.0 : s.upperBounds.last();
}

} // namespace payonce::core
