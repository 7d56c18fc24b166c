#pragma once

#include "shared/layer.h"

#include <QDateTime>
#include <QMap>

#include <array>
#include <vector>

namespace payonce::console {

/// The per-layer rates of the last few minutes, for the dashboard's scrolling chart. A
/// ring buffer of fixed capacity: memory stays bounded however long the console runs or
/// however fast metrics arrive; the oldest sample goes first, and samples older than the
/// window (measured from the newest) are dropped too.
class RateHistory {
public:
    static constexpr qint64 kDefaultWindowMs = 5 * 60 * 1000;
    /// 5 minutes at the agent's fastest production interval (100 ms).
    static constexpr int kDefaultCapacity = 3000;

    struct Sample {
        qint64 atMs = 0;
        std::array<double, allLayers.size()> rates{};
    };

    explicit RateHistory(qint64 windowMs = kDefaultWindowMs, int capacity = kDefaultCapacity);

    /// A sample out of time order (older than the newest) is ignored: the plot's keys
    /// must stay sorted.
    void add(const QDateTime &when, const QMap<Layer, double> &rates);
    void clear();

    int size() const { return m_size; }
    int capacity() const { return int(m_ring.size()); }
    qint64 windowMs() const { return m_windowMs; }
    /// Oldest first; i < size().
    const Sample &at(int i) const;
    qint64 newestMs() const;

private:
    void dropOldest();

    std::vector<Sample> m_ring;
    qint64 m_windowMs;
    int m_head = 0; ///< index of the oldest sample
    int m_size = 0;
};

} // namespace payonce::console
