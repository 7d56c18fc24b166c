#pragma once

#include "core/ports/lockobserver.h"

#include <QString>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>

namespace payonce::redis {

struct Lease;

/// core::LockObserver for one key store: every LeaseHandle the store hands out is
/// recorded here with its lease (shared with the watchdog, which counts renewals). A
/// released lease is forgotten; a lost one stays, as "recently lost", among the last
/// kMaxLost; the last fencing token per scope is kept for the last kMaxScopes scopes.
/// Thread-safe; in memory only.
class LockRegistry final : public core::LockObserver {
public:
    static constexpr std::size_t kMaxLost = 64;
    static constexpr std::size_t kMaxScopes = 256;

    void record(const QString &key, const QString &owner, quint64 fencingToken, const QString &fenceScope,
                const std::shared_ptr<const Lease> &lease);

    QList<core::LockView> locks() const override;
    /// The recorded view of a lease (state Lost when it is), or nullopt when forgotten.
    std::optional<core::LockView> viewOf(const Lease &lease) const;
    QList<core::FenceView> lastFencingTokens() const override;

private:
    struct Entry {
        core::LockView view;
        std::shared_ptr<const Lease> lease;
    };
    void pruneLocked() const;

    mutable std::mutex m_mutex;
    mutable std::deque<Entry> m_entries;  ///< oldest first
    std::deque<core::FenceView> m_fences; ///< oldest first, one per scope
};

} // namespace payonce::redis
