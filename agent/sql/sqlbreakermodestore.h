#pragma once

#include "database.h"

#include "core/ports/breakermodestore.h"

namespace payonce::sql {

/// Breaker modes in the `settings` table, one row per breaker named "breaker.<name>",
/// value {"mode","changed_at_ms","expires_at_ms"} as JSON, updated_by = the actor,
/// reason = the operator's reason; version grows with every set(). set() is an
/// insert-if-absent then an UPDATE in one transaction (idempotent). Thread-safe.
class SqlBreakerModeStore final : public core::BreakerModeStore {
public:
    explicit SqlBreakerModeStore(Database &database) : m_database(database) {}

    core::Result<QHash<QString, core::BreakerModeSetting>> all() override;
    core::Result<void> set(const QString &breaker, const core::BreakerModeSetting &setting) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
