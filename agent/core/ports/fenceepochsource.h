#pragma once

#include "core/result.h"

#include <QString>

namespace payonce::core {

/// Hands out the epoch half of fencing tokens (token = epoch * 2^32 + per-order counter).
///
/// The epoch is a durable sequence: epochFor() returns the epoch recorded for a key-store
/// instance (a Redis run_id, or the embedded store's start id), creating a new, larger one
/// the first time an instance is seen. Several agents that see the same new instance at
/// once all get the same epoch. So tokens per order only grow across Redis restarts and
/// failovers. Thread-safe; idempotent per instance id.
class FenceEpochSource {
public:
    virtual ~FenceEpochSource() = default;
    virtual Result<quint32> epochFor(const QString &keyStoreInstanceId) = 0;
};

} // namespace payonce::core
