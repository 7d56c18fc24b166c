#pragma once

#include "core/ports/breakermodestore.h"

#include <QHash>
#include <QString>

#include <mutex>

namespace payonce::testsupport {

/// The breakers' operator modes in memory (the SQL store is tested per dialect), with the
/// number of reads, so a test can see how often a breaker refreshes its mode. Thread-safe.
class FakeModeStore final : public core::BreakerModeStore {
public:
    core::Result<QHash<QString, core::BreakerModeSetting>> all() override
    {
        std::lock_guard guard(m_mutex);
        ++m_reads;
        return m_settings;
    }
    core::Result<void> set(const QString &breaker, const core::BreakerModeSetting &setting) override
    {
        std::lock_guard guard(m_mutex);
        m_settings.insert(breaker, setting);
        return {};
    }
    int reads() const
    {
        std::lock_guard guard(m_mutex);
        return m_reads;
    }

private:
    mutable std::mutex m_mutex;
    int m_reads = 0;
    QHash<QString, core::BreakerModeSetting> m_settings;
};

} // namespace payonce::testsupport
