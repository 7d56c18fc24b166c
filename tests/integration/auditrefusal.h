#pragma once

#include "core/result.h"
#include "sql/database.h"

#include <QString>

namespace payonce::testsupport {

/// Makes the database refuse audit_log rows of one action (a BEFORE INSERT trigger that
/// raises an error), so a suite can prove that an audited change and its audit row commit
/// together: with the row refused, the change must not have happened either. `action`
/// must be a plain audit action name ([a-z_.]); it is written into the trigger's text.
core::Result<void> refuseAuditRows(sql::Database &database, const QString &action);

/// Drops what refuseAuditRows() made; audit rows of every action are written again.
core::Result<void> allowAuditRows(sql::Database &database);

} // namespace payonce::testsupport
