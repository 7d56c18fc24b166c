#pragma once

#include "core/common/result.h"
#include "sql/database.h"

#include <QString>
#include <QStringList>

namespace payonce::testsupport {

/// Makes the database refuse audit_log rows of these actions (a BEFORE INSERT trigger that
/// raises an error), so a suite can prove that an audited change and its audit row commit
/// together: with the row refused, the change must not have happened either. Each action
/// must be a plain audit action name ([a-z_.]); they are written into the trigger's text.
core::Result<void> refuseAuditRows(sql::Database &database, const QStringList &actions);

/// Drops what refuseAuditRows() made; audit rows of every action are written again.
core::Result<void> allowAuditRows(sql::Database &database);

} // namespace payonce::testsupport
