#include "categories.h"

namespace payonce {
Q_LOGGING_CATEGORY(lcConfig, "payonce.agent.config")
Q_LOGGING_CATEGORY(lcSql, "payonce.agent.sql")
Q_LOGGING_CATEGORY(lcRedis, "payonce.agent.redis")
Q_LOGGING_CATEGORY(lcHttp, "payonce.agent.http")
Q_LOGGING_CATEGORY(lcAccess, "payonce.agent.access")
Q_LOGGING_CATEGORY(lcCore, "payonce.agent.core")
Q_LOGGING_CATEGORY(lcApp, "payonce.agent.app")
Q_LOGGING_CATEGORY(lcOutbox, "payonce.agent.outbox")
} // namespace payonce
