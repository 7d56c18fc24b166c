#pragma once

#include "config/databaseurl.h"
#include "core/common/error.h"

class QSqlError;

namespace payonce::sql {

using Dialect = config::DatabaseUrl::Dialect;

/// What a database error means to the code that got it. Decided from the driver's native
/// code (QSqlError::nativeErrorCode()), never from type(): QSQLITE reports a constraint
/// violation as a ConnectionError. docs/design.md, "Storage", lists the codes.
enum class SqlErrorKind {
    UniqueViolation, ///< SQLite 2067/1555, PostgreSQL 23505, MariaDB 1062
    Retryable,       ///< busy, lock timeout, deadlock, serialization: the whole transaction may run again
    ConnectionLost,  ///< the connection is broken; reopen it (safe to retry only before COMMIT)
    AuthFailed,      ///< wrong user or password: retrying will not help
    Other,
};

SqlErrorKind classifySqlError(Dialect dialect, const QSqlError &error);

/// The core error for a classified database error. `what` says what was being done
/// ("insert pay_callback_log"); the driver's text goes to internalMessage only.
core::Error toCoreError(Dialect dialect, const QSqlError &error, const QString &what);

} // namespace payonce::sql
