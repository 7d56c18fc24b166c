#pragma once

#include "core/ports/fenceepochsource.h"

#include <QHash>

#include <mutex>

namespace payonce::tests {

/// A FenceEpochSource in memory for tests, behaving like the SQL one (fence_epochs): the
/// first time an instance id is seen it gets the next, larger epoch; the same id always
/// gets the same epoch. Thread-safe. Starts above 1 so that an epoch of 0 would show.
class MemoryFenceEpochSource final : public core::FenceEpochSource {
public:
    core::Result<quint32> epochFor(const QString &keyStoreInstanceId) override
    {
        std::lock_guard lock(m_mutex);
        ++m_calls;
        if (const auto found = m_epochs.constFind(keyStoreInstanceId); found != m_epochs.constEnd())
            return found.value();
        const quint32 epoch = ++m_last;
        m_epochs.insert(keyStoreInstanceId, epoch);
        return epoch;
    }

    int instancesSeen() const
    {
        std::lock_guard lock(m_mutex);
        return static_cast<int>(m_epochs.size());
    }

private:
    mutable std::mutex m_mutex;
    QHash<QString, quint32> m_epochs;
    quint32 m_last = 6;
    int m_calls = 0;
};

} // namespace payonce::tests
