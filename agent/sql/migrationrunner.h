#pragma once

#include "database.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace payonce::sql {

/// One numbered schema step: sql/<dialect>/NNN_name.sql, built into the agent as a resource.
struct Migration {
    int version = 0;
    QString name; ///< "001_initial"
    QString sql;
    QByteArray checksum; ///< SHA-256 hex of the file's bytes
};

/// Brings a database to the schema this build knows, recording each step in
/// schema_migrations (version, name, checksum, applied_at).
///
/// Idempotent: a second run applies nothing. Several agents starting at once serialise on
/// a migration lock (PostgreSQL advisory lock, MariaDB GET_LOCK, SQLite's single writer).
/// Refuses, with SchemaTooNew, a database migrated by a newer payonce, and, with
/// Misconfigured, one whose applied migration differs from this build's file (edited after
/// release). On PostgreSQL and SQLite each migration is one transaction; MariaDB commits
/// DDL implicitly, so a migration that fails there midway is reported with its statement.
class MigrationRunner {
public:
    explicit MigrationRunner(Database &database);

    /// The migrations built in for a dialect, in version order.
    static QList<Migration> bundled(Dialect dialect);

    /// Applies what is missing; returns how many migrations it applied.
    core::Result<int> migrate();
    /// The highest applied version (0 for an empty database).
    core::Result<int> currentVersion();

    /// Splits a migration into statements at top-level ';' — not inside quotes, comments,
    /// PostgreSQL dollar-quoted bodies, or a CREATE TRIGGER's BEGIN … END block.
    static QStringList splitStatements(const QString &sql);

private:
    core::Result<void> ensureBookkeeping(Session &session);
    core::Result<void> apply(Session &session, const Migration &migration);
    /// Reads what is applied and applies the rest, in version order, on `session`.
    core::Result<int> applyPending(Session &session, const QList<Migration> &known);
    core::Result<void> checkApplied(Session &session, const QList<Migration> &known, int *highest);

    Database &m_database;
};

} // namespace payonce::sql
