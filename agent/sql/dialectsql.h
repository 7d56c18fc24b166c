#pragma once

#include "sqlerrors.h"

#include <QString>
#include <QStringList>

namespace payonce::sql {

/// "INSERT … unless a row with the same unique key exists", answering through the
/// affected-row count (1 inserted, 0 already there). For use inside a larger transaction,
/// where a unique violation would abort a PostgreSQL transaction.
/// - SQLite and PostgreSQL: INSERT … ON CONFLICT DO NOTHING.
/// - MariaDB: INSERT … ON DUPLICATE KEY UPDATE c = c — not INSERT IGNORE, which would also
///   turn other errors (NOT NULL, truncation) into warnings. Without CLIENT_FOUND_ROWS the
///   no-op update reports 0 rows.
/// `noopColumn` is any column of the table (MariaDB's no-op assignment).
QString insertIfAbsentSql(Dialect dialect, const QString &table, const QStringList &columns, const QString &noopColumn);

/// " FOR UPDATE" where the dialect has row locks (PostgreSQL, MariaDB); "" for SQLite,
/// whose one writer (BEGIN IMMEDIATE) is alone anyway.
QString forUpdate(Dialect dialect);

} // namespace payonce::sql
