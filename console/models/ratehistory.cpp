#include "ratehistory.h"

#include <algorithm>

namespace payonce::console {

RateHistory::RateHistory(qint64 windowMs, int capacity)
    : m_ring(std::size_t(std::max(capacity, 1))), m_windowMs(windowMs)
{
}

void RateHistory::add(const QDateTime &when, const QMap<Layer, double> &rates)
{
    const qint64 atMs = when.toMSecsSinceEpoch();
    if (m_size > 0 && atMs < newestMs())
        return;
    if (m_size == capacity())
        dropOldest();
    Sample &sample = m_ring[std::size_t((m_head + m_size) % capacity())];
    sample.atMs = atMs;
    for (std::size_t i = 0; i < allLayers.size(); ++i)
        sample.rates[i] = rates.value(allLayers[i]);
    ++m_size;
    while (m_size > 1 && at(0).atMs < atMs - m_windowMs)
        dropOldest();
}

void RateHistory::clear()
{
    m_head = 0;
    m_size = 0;
}

const RateHistory::Sample &RateHistory::at(int i) const
{
    return m_ring[std::size_t((m_head + i) % capacity())];
}

qint64 RateHistory::newestMs() const
{
    return m_size > 0 ? at(m_size - 1).atMs : 0;
}

void RateHistory::dropOldest()
{
    m_head = (m_head + 1) % capacity();
    --m_size;
}

} // namespace payonce::console
