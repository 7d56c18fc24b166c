#pragma once

#include "database.h"

#include "core/ports/fenceepochsource.h"

namespace payonce::sql {

/// core::FenceEpochSource on the fence_epochs table: the epoch is the row's
/// auto-increment key, so a key-store instance seen for the first time always gets a
/// larger epoch than every earlier one, and agents that see the same instance agree
/// (insert-if-absent on the unique instance_id, then read it back, in one transaction).
class SqlFenceEpochSource final : public core::FenceEpochSource {
public:
    explicit SqlFenceEpochSource(Database &database) : m_database(database) {}
    core::Result<quint32> epochFor(const QString &keyStoreInstanceId) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
