#pragma once

#include "session.h"
#include "sqlcallbacklog.h"

#include "core/ports/callbackstore.h"

#include <functional>

namespace payonce::sql {

class SqlCallbackStore;

/// Runs `work` on the callback path's business transaction (core::CallbackTransaction) over
/// `session`'s open transaction: the order CAS, the effects on their keys, the log and
/// delivery rows, grouped on PostgreSQL (groupedwrites.h). For SqlCallbackStore::inTransaction.
core::Result<void> runCallbackTransaction(Session &session, SqlCallbackLog &log, SqlCallbackStore &store,
                                          const std::function<core::Result<void>(core::CallbackTransaction &)> &work);

} // namespace payonce::sql
