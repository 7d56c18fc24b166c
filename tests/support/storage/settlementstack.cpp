#include "settlementstack.h"

namespace payonce::testsupport {

using namespace payonce::core;
using namespace std::chrono_literals;

bool SettlementStack::start(Dialect dialect, const QString &mchId, QString *error)
{
    db = MigratedDatabase::start(dialect, error);
    if (!db)
        return false;
    epochs = std::make_unique<sql::SqlFenceEpochSource>(database());
    auto made = redis::EmbeddedKeyStore::create(*epochs);
    if (!made.ok()) {
        *error = made.error().internalMessage;
        return false;
    }
    keys = std::move(made).value();
    callbackStore = std::make_unique<sql::SqlCallbackStore>(database());
    modes = std::make_unique<sql::SqlCallbackModeStore>(database());
    history = std::make_unique<sql::SqlCallbackHistory>(database());
    audit = std::make_unique<sql::SqlAuditWriter>(database());
    compensationStore = std::make_unique<sql::SqlCompensationStore>(database());
    patrolStore = std::make_unique<sql::SqlPatrolStore>(database());
    compensations = std::make_unique<CompensationService>(*compensationStore, *audit);
    verifier = std::make_unique<JsonVerifier>(mchId);
    CallbackPipelineOptions options;
    options.weChatMchId = mchId;
    options.modeCacheMs = 0;
    options.lockWait = 2s;
    options.history = history.get();
    pipeline = std::make_unique<CallbackPipeline>(*verifier, *callbackStore, *modes, keys->locks(),
                                                  &keys->seenProcessed(), clock, options);
    return true;
}

qint64 SettlementStack::count(const QString &sql, const QVariantList &binds)
{
    return countRowsOrWarn(database(), sql, binds);
}

QString SettlementStack::text(const QString &sql, const QVariantList &binds)
{
    return firstValueText(database(), sql, binds);
}

bool SettlementStack::exec(const QString &sql, const QVariantList &binds)
{
    auto done = database().write([&](sql::Session &session) -> Result<void> {
        auto q = session.exec(sql, binds);
        if (!q)
            return q.error();
        return {};
    });
    if (!done.ok())
        qWarning() << "exec failed:" << done.error().internalMessage;
    return done.ok();
}

bool SettlementStack::setCallbackMode(core::CallbackMode mode, const QString &reason)
{
    const auto set = modes->setMode(mode, QStringLiteral("test"), reason, clock.nowMs());
    if (!set.ok())
        qWarning() << "setMode failed:" << set.error().internalMessage;
    return set.ok();
}

} // namespace payonce::testsupport
