#pragma once

#include <QtGlobal>

#include <initializer_list>

namespace payonce::simulation {

/// The one source of choices in a run: SplitMix64, written out here so that a seed means
/// the same sequence on every compiler and standard library. Not thread-safe (the driver
/// draws on its own thread only).
class SimRandom {
public:
    explicit SimRandom(quint64 seed) : m_state(seed) {}

    quint64 next()
    {
        quint64 z = (m_state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, bound); bound > 0. The modulo bias is irrelevant at these sizes.
    qint64 below(qint64 bound) { return qint64(next() % quint64(bound)); }
    /// Uniform in [low, high].
    qint64 between(qint64 low, qint64 high) { return low + below(high - low + 1); }
    /// true with probability percent / 100.
    bool chance(int percent) { return below(100) < percent; }
    /// An index into weights, each chosen with probability weight / sum.
    int weighted(std::initializer_list<int> weights)
    {
        int total = 0;
        for (int w : weights)
            total += w;
        qint64 pick = below(total);
        int index = 0;
        for (int w : weights) {
            if (pick < w)
                return index;
            pick -= w;
            ++index;
        }
        return index - 1;
    }

private:
    quint64 m_state;
};

} // namespace payonce::simulation
