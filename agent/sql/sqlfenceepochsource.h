#pragma once

#include "database.h"

#include "core/ports/fenceepochsource.h"

namespace payonce::sql {

/// core::FenceEpochSource on the fence_epochs table: one row per epoch handed out, the
/// epoch its auto-increment key (never reused, so every new row is above every earlier
/// one), with the key-store instance it went to and why.
class SqlFenceEpochSource final : public core::FenceEpochSource {
public:
    explicit SqlFenceEpochSource(Database &database) : m_database(database) {}
    core::Result<quint32> newEpoch(const QString &keyStoreInstanceId, const QString &reason) override;
    core::Result<quint32> largestEpoch() override;

private:
    Database &m_database;
};

} // namespace payonce::sql
