#pragma once

#include "core/common/boundedcache.h"

#include <QByteArray>
#include <QString>

namespace payonce::redis {

/// A bounded, expiring set of strings, each with a value: at most `capacity` entries (the
/// least recently marked go first), each forgotten after `ttl`. The in-process front of the
/// seen-processed set (the value: what the payment was), and all of it in the embedded
/// store. Thread-safe.
class BoundedSeenSet final : public core::BoundedCache<QString, QByteArray> {
public:
    using BoundedCache::BoundedCache;

    void insert(const QString &item, const QByteArray &value = {}) { BoundedCache::insert(item, value); }
    bool contains(const QString &item) { return find(item).has_value(); }
};

} // namespace payonce::redis
