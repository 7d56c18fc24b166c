#pragma once

#include <QList>
#include <QtGlobal>

#include <atomic>
#include <chrono>
#include <memory>

namespace payonce::core {

/// A latency histogram with fixed bucket bounds (seconds, ascending, set at construction)
/// and an implicit +Inf bucket: observe() is lock-free (one atomic add on the bucket, one
/// on the sum in whole nanoseconds), so workers never wait on a scrape.
///
/// quantile() estimates like Prometheus' histogram_quantile(): it finds the bucket holding
/// the rank q·count and interpolates linearly inside it (from 0 for the first bucket); a
/// rank in the +Inf bucket answers the highest finite bound. Thread-safe.
class LatencyHistogram {
public:
    /// 1 ms … 10 s, the Prometheus client defaults plus 1 ms.
    static QList<double> defaultBounds();

    explicit LatencyHistogram(QList<double> upperBounds = defaultBounds());

    void observe(std::chrono::nanoseconds duration);
    void observeSeconds(double seconds);

    /// A consistent-enough copy: cumulative counts per finite bound, then +Inf (= count).
    struct Snapshot {
        QList<double> upperBounds;
        QList<quint64> cumulative; ///< one per bound, plus the +Inf bucket last
        quint64 count = 0;
        double sumSeconds = 0.0;
    };
    Snapshot snapshot() const;

    /// q in [0, 1]; 0 when nothing was observed.
    double quantile(double q) const;
    static double quantile(const Snapshot &snapshot, double q);

private:
    QList<double> m_bounds;
    std::unique_ptr<std::atomic<quint64>[]> m_buckets; // m_bounds.size() + 1, not cumulative
    std::atomic<quint64> m_sumNanos{0};
};

} // namespace payonce::core
