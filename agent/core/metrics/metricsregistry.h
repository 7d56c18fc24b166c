#pragma once

#include "core/metrics/counter.h"
#include "core/metrics/latencyhistogram.h"
#include "core/metrics/prometheustext.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace payonce::core {

/// What a series family is, as the exposition format's TYPE line says.
enum class MetricType {
    Counter,
    Gauge,
    Histogram
};

/// One value of a family read at scrape time.
struct MetricSample {
    MetricLabels labels;
    double value = 0.0;
};

/// The agent's metrics, rendered as Prometheus text (format 0.0.4) by GET /metrics.
///
/// Three kinds of family:
/// - counter(): a Counter owned here; a series is created once (under a mutex) and the
///   reference kept by its user, so counting afterwards is one lock-free atomic add;
/// - histogram(): a LatencyHistogram owned here, the same way;
/// - addReader(): values read at scrape time through a callback — counters that a
///   pipeline already keeps (never counted twice), and gauges from the breakers, the key
///   store and the database. A callback runs on the scraping thread (a worker) and may
///   block briefly; it must be thread-safe.
///
/// Families render in registration order, series in creation order. A name is one
/// family: registering it again with other labels adds a series; with another type or
/// kind is a programmer error (Q_ASSERT). Thread-safe; references stay valid for the
/// registry's lifetime.
class MetricsRegistry {
public:
    using Reader = std::function<QList<MetricSample>()>;

    Counter &counter(const QString &name, const QString &help, const MetricLabels &labels = {});
    LatencyHistogram &histogram(const QString &name, const QString &help, const MetricLabels &labels = {},
                                const QList<double> &upperBounds = LatencyHistogram::defaultBounds());
    void addReader(const QString &name, const QString &help, MetricType type, Reader reader);

    QByteArray render() const;

    /// One family's samples read now (its counters, or its reader's values): for the live
    /// stream, which reads a few families several times a second and must not render the
    /// database-backed ones. Empty for an unknown name or a histogram family.
    QList<MetricSample> samples(const QString &name) const;
    /// Every series of a histogram family merged into one (the same bounds); nullopt for
    /// an unknown name or when the series' bounds differ.
    std::optional<LatencyHistogram::Snapshot> histogramSnapshot(const QString &name) const;

private:
    struct Family {
        QString name;
        QString help;
        MetricType type = MetricType::Counter;
        std::deque<std::pair<MetricLabels, Counter>> counters;
        std::deque<std::pair<MetricLabels, LatencyHistogram>> histograms;
        Reader reader;
    };
    Family &familyLocked(const QString &name, const QString &help, MetricType type);

    mutable std::mutex m_mutex;
    std::deque<Family> m_families;
    std::map<QString, Family *> m_byName;
};

} // namespace payonce::core
