#pragma once

#include "fakes/fakeplatform.h"
#include "fakes/jsonverifier.h"
#include "storagefixture.h"

#include "core/callback/callbackpipeline.h"
#include "core/ports/clock.h"
#include "core/settlement/compensationservice.h"
#include "redis/embeddedkeystore.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcallbackhistory.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlpatrolstore.h"

#include <memory>

namespace payonce::testsupport {

/// What the settle and close suites stand on: the migrated database of the dialect under
/// test, the embedded key store, the callback, audit, compensation and patrol stores, and
/// the real callback pipeline over a JsonVerifier of merchant `mchId` (lock wait 2 s, the
/// mode read for every delivery, its history reads) — plus the SQL helpers those suites check rows with.
struct SettlementStack {
    MigratedDatabase db;
    std::unique_ptr<sql::SqlFenceEpochSource> epochs;
    std::unique_ptr<redis::EmbeddedKeyStore> keys;
    std::unique_ptr<sql::SqlCallbackStore> callbackStore;
    std::unique_ptr<sql::SqlCallbackModeStore> modes;
    std::unique_ptr<sql::SqlCallbackHistory> history; ///< the pipeline's replay reads, as in the agent
    std::unique_ptr<sql::SqlAuditWriter> audit;
    std::unique_ptr<sql::SqlCompensationStore> compensationStore;
    std::unique_ptr<sql::SqlPatrolStore> patrolStore;
    std::unique_ptr<core::CompensationService> compensations;
    std::unique_ptr<JsonVerifier> verifier;
    std::unique_ptr<core::CallbackPipeline> pipeline;
    core::SystemClock clock;

    /// false with *error saying why (the server's log tail included).
    bool start(Dialect dialect, const QString &mchId, QString *error);

    sql::Database &database() { return *db.database; }
    /// SELECT COUNT(*); -1 on error (logged).
    qint64 count(const QString &sql, const QVariantList &binds = {});
    /// The first column of the first row as text; "" when none, "<error: …>" on error.
    QString text(const QString &sql, const QVariantList &binds);
    /// One statement in its own transaction; false on error (logged).
    bool exec(const QString &sql, const QVariantList &binds = {});
    /// Sets the callback mode as the actor "test" would, for `reason`, now; false on error (logged).
    bool setCallbackMode(core::CallbackMode mode, const QString &reason);
};

} // namespace payonce::testsupport
