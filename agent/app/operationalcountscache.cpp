#include "operationalcountscache.h"

#include "logging/categories.h"

namespace payonce::app {

OperationalCountsCache::OperationalCountsCache(core::OperationalCountsReader &reader) : m_reader(reader)
{
    m_pool.setMaxThreadCount(1);
    m_pool.setExpiryTimeout(-1);
}

OperationalCountsCache::~OperationalCountsCache()
{
    stop();
}

std::optional<core::OperationalCounts> OperationalCountsCache::readNow()
{
    auto read = m_reader.read();
    std::lock_guard lock(m_mutex);
    if (!read) {
        qCWarning(lcApp).noquote() << "metrics: cannot read the outbox and finding counts:"
                                   << read.error().internalMessage;
        m_last.reset();
    } else {
        m_last = read.value();
    }
    return m_last;
}

std::optional<core::OperationalCounts> OperationalCountsCache::last() const
{
    std::lock_guard lock(m_mutex);
    return m_last;
}

void OperationalCountsCache::refreshInBackground()
{
    if (m_stopped.load() || m_refreshing.exchange(true))
        return;
    m_pool.start([this] {
        readNow();
        m_refreshing.store(false);
    });
}

void OperationalCountsCache::stop()
{
    m_stopped.store(true);
    m_pool.waitForDone();
}

} // namespace payonce::app
