#pragma once

#include "core/common/result.h"

#include <QString>

namespace payonce::core {

/// Hands out the epoch half of fencing tokens (token = epoch * 2^32 + counter).
///
/// The epoch is a durable sequence that never goes back and is never handed out twice:
/// newEpoch() records a new epoch, larger than every one before it, for a key-store
/// instance (a Redis run_id, or the embedded store's start id) and says why it was needed;
/// each call gets its own, also under concurrency. A key store asks for one whenever the
/// counters it would continue could be below a token already handed out: an instance
/// without fence state (new, restarted empty, its keys lost), state written by another
/// process (restored from disk, replicated), an instance whose epoch is below
/// largestEpoch() (a failback to it), a full counter. Thread-safe.
class FenceEpochSource {
public:
    virtual ~FenceEpochSource() = default;
    /// A new epoch for `keyStoreInstanceId` (1 to 128 characters); `reason` is recorded
    /// with it (1 to 32 characters: why the instance needed one).
    virtual Result<quint32> newEpoch(const QString &keyStoreInstanceId, const QString &reason) = 0;
    /// The largest epoch handed out so far; 0 when none was.
    virtual Result<quint32> largestEpoch() = 0;
};

} // namespace payonce::core
