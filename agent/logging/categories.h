#pragma once

#include <QLoggingCategory>

/// The agent's logging categories, one per area, all under "payonce.agent.". Declared in
/// one place so names cannot drift and QT_LOGGING_RULES / --log-level reach all of them.
/// Add a new area here and in categories.cpp.
namespace payonce {
Q_DECLARE_LOGGING_CATEGORY(lcConfig) // payonce.agent.config
Q_DECLARE_LOGGING_CATEGORY(lcSql)    // payonce.agent.sql
Q_DECLARE_LOGGING_CATEGORY(lcRedis)  // payonce.agent.redis
Q_DECLARE_LOGGING_CATEGORY(lcHttp)   // payonce.agent.http
Q_DECLARE_LOGGING_CATEGORY(lcAccess) // payonce.agent.access: one debug line per reply
Q_DECLARE_LOGGING_CATEGORY(lcCore)   // payonce.agent.core
Q_DECLARE_LOGGING_CATEGORY(lcApp)    // payonce.agent.app
Q_DECLARE_LOGGING_CATEGORY(lcOutbox) // payonce.agent.outbox
} // namespace payonce
