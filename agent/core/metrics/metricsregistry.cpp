#include "core/metrics/metricsregistry.h"

#include <vector>

namespace payonce::core {

namespace {

const char *typeName(MetricType type)
{
    switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    case MetricType::Histogram: return "histogram";
    }
    return "untyped";
}

QByteArray sampleLine(const QString &name, const MetricLabels &labels, double value)
{
    return name.toLatin1() + prometheus::labelSet(labels) + ' ' + prometheus::formatValue(value) + '\n';
}

QByteArray renderHistogram(const QString &name, const MetricLabels &labels, const LatencyHistogram &histogram)
{
    const LatencyHistogram::Snapshot s = histogram.snapshot();
    QByteArray out;
    const QString bucket = name + QStringLiteral("_bucket");
    for (qsizetype i = 0; i <= s.upperBounds.size(); ++i) {
        MetricLabels withLe = labels;
        withLe.append({QStringLiteral("le"), i < s.upperBounds.size()
                                                 ? QString::fromLatin1(prometheus::formatValue(s.upperBounds.at(i)))
                                                 : QStringLiteral("+Inf")});
        out += sampleLine(bucket, withLe, double(s.cumulative.at(i)));
    }
    out += sampleLine(name + QStringLiteral("_sum"), labels, s.sumSeconds);
    out += sampleLine(name + QStringLiteral("_count"), labels, double(s.count));
    return out;
}

} // namespace

MetricsRegistry::Family &MetricsRegistry::familyLocked(const QString &name, const QString &help, MetricType type)
{
    const auto found = m_byName.find(name);
    if (found != m_byName.end()) {
        Q_ASSERT(found->second->type == type);
        return *found->second;
    }
    Family &family = m_families.emplace_back();
    family.name = name;
    family.help = help;
    family.type = type;
    m_byName.emplace(name, &family);
    return family;
}

Counter &MetricsRegistry::counter(const QString &name, const QString &help, const MetricLabels &labels)
{
    std::lock_guard lock(m_mutex);
    Family &family = familyLocked(name, help, MetricType::Counter);
    Q_ASSERT(!family.reader);
    for (auto &series : family.counters) {
        if (series.first == labels)
            return series.second;
    }
    return family.counters.emplace_back(std::piecewise_construct, std::forward_as_tuple(labels), std::tuple<>()).second;
}

LatencyHistogram &MetricsRegistry::histogram(const QString &name, const QString &help, const MetricLabels &labels,
                                             const QList<double> &upperBounds)
{
    std::lock_guard lock(m_mutex);
    Family &family = familyLocked(name, help, MetricType::Histogram);
    for (auto &series : family.histograms) {
        if (series.first == labels)
            return series.second;
    }
    return family.histograms
        .emplace_back(std::piecewise_construct, std::forward_as_tuple(labels), std::forward_as_tuple(upperBounds))
        .second;
}

void MetricsRegistry::addReader(const QString &name, const QString &help, MetricType type, Reader reader)
{
    Q_ASSERT(type != MetricType::Histogram);
    std::lock_guard lock(m_mutex);
    Family &family = familyLocked(name, help, type);
    Q_ASSERT(!family.reader && family.counters.empty());
    family.reader = std::move(reader);
}

QByteArray MetricsRegistry::render() const
{
    // Copy what to read under the mutex; readers run outside it (they may touch the
    // database), and series created meanwhile simply appear in the next scrape.
    struct Item {
        const Family *family;
        std::vector<const std::pair<MetricLabels, Counter> *> counters;
        std::vector<const std::pair<MetricLabels, LatencyHistogram> *> histograms;
    };
    std::vector<Item> items;
    {
        std::lock_guard lock(m_mutex);
        for (const Family &family : m_families) {
            Item &item = items.emplace_back(Item{&family, {}, {}});
            for (const auto &series : family.counters)
                item.counters.push_back(&series);
            for (const auto &series : family.histograms)
                item.histograms.push_back(&series);
        }
    }
    QByteArray out;
    for (const Item &item : items) {
        const Family &family = *item.family;
        QByteArray body;
        for (const auto *series : item.counters)
            body += sampleLine(family.name, series->first, double(series->second.value()));
        for (const auto *series : item.histograms)
            body += renderHistogram(family.name, series->first, series->second);
        if (family.reader) {
            const QList<MetricSample> samples = family.reader();
            for (const MetricSample &sample : samples)
                body += sampleLine(family.name, sample.labels, sample.value);
        }
        out += prometheus::header(family.name, family.help, typeName(family.type));
        out += body;
    }
    return out;
}

QList<MetricSample> MetricsRegistry::samples(const QString &name) const
{
    QList<MetricSample> out;
    Reader reader;
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_byName.find(name);
        if (it == m_byName.end())
            return out;
        for (const auto &series : it->second->counters)
            out.append({series.first, double(series.second.value())});
        reader = it->second->reader;
    }
    if (reader)
        out += reader();
    return out;
}

std::optional<LatencyHistogram::Snapshot> MetricsRegistry::histogramSnapshot(const QString &name) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_byName.find(name);
    if (it == m_byName.end() || it->second->histograms.empty())
        return std::nullopt;
    std::optional<LatencyHistogram::Snapshot> merged;
    for (const auto &series : it->second->histograms) {
        const LatencyHistogram::Snapshot s = series.second.snapshot();
        if (!merged) {
            merged = s;
            continue;
        }
        if (s.upperBounds != merged->upperBounds || s.cumulative.size() != merged->cumulative.size())
            return std::nullopt;
        for (qsizetype i = 0; i < s.cumulative.size(); ++i)
            merged->cumulative[i] += s.cumulative.at(i);
        merged->count += s.count;
        merged->sumSeconds += s.sumSeconds;
    }
    return merged;
}

} // namespace payonce::core
