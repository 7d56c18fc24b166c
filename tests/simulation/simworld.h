#pragma once

#include "simclock.h"
#include "simplatform.h"
#include "simverifier.h"

#include "core/callback/callbackpipeline.h"
#include "core/callback/callbackworker.h"
#include "core/confirm/confirmpipeline.h"
#include "core/confirm/tokenissuer.h"
#include "core/orders/setupservice.h"
#include "core/outbox/outboxdispatcher.h"
#include "core/outbox/outboxhandler.h"
#include "core/settlement/compensationservice.h"
#include "core/settlement/ordercloser.h"
#include "core/settlement/patrol.h"
#include "core/settlement/refundservice.h"
#include "redis/embeddedkeystore.h"
#include "sql/database.h"
#include "sql/sqlauditwriter.h"
#include "sql/sqlcallbackhistory.h"
#include "sql/sqlcallbackstore.h"
#include "sql/sqlcompensationstore.h"
#include "sql/sqlfenceepochsource.h"
#include "sql/sqlidempotencystore.h"
#include "sql/sqlorderclosestore.h"
#include "sql/sqlorderrepository.h"
#include "sql/sqloutboxstore.h"
#include "sql/sqlpatrolstore.h"
#include "sql/sqlpaymentstore.h"
#include "sql/sqlrefundstore.h"

#include <QStringList>

#include <memory>
#include <optional>

namespace payonce::simulation {

/// What the world reports back to the driver while an operation runs.
struct WorldProbe {
    /// The callback pipeline's lock/begin/commit/rollback/unlock events since the driver
    /// last cleared it.
    QStringList pipelineEvents;
    /// Armed by the driver: the next time the pipeline reaches this point it stops as if
    /// the process died there (transaction rolled back, lock left to expire).
    std::optional<core::CallbackHookPoint> crashAt;
    bool crashed = false;
};

/// The agent's core services over one database and the embedded key store, wired as the
/// agent wires them (agent/app/agentruntime.cpp), on the simulation's clock and platform:
/// confirm, callbacks and their worker, compensations, refunds, the patrol, order close,
/// the outbox. A crash is `build()` again on the same database: everything in memory (the
/// key store's locks, tokens and seen-processed marks included) is gone, what is durable stays.
struct SimWorld {
    struct Options {
        config::DatabaseUrl url;
        bool qaSwitches = false; ///< the pipeline accepts QA layer switches (mutants only)
        core::CallbackLayerSwitches switches;
    };

    static core::Result<std::unique_ptr<SimWorld>> build(const Options &options, SimClock &clock, SimPlatform &platform,
                                                         WorldProbe &probe,
                                                         const core::OutboxHandlerRegistry &handlers);
    ~SimWorld();

    core::PaymentGateway *gateway(core::Channel channel);

    std::unique_ptr<sql::Database> database;
    std::unique_ptr<sql::SqlFenceEpochSource> epochs;
    std::unique_ptr<redis::EmbeddedKeyStore> keys;
    std::unique_ptr<SimGateway> weChat;
    std::unique_ptr<SimGateway> alipay;
    std::unique_ptr<SimVerifier> verifier;
    std::unique_ptr<sql::SqlAuditWriter> audit;
    std::unique_ptr<sql::SqlIdempotencyStore> idempotency;
    std::unique_ptr<sql::SqlPaymentStore> payments;
    std::unique_ptr<sql::SqlOrderRepository> orders;
    std::unique_ptr<sql::SqlCallbackStore> callbackStore;
    std::unique_ptr<sql::SqlCallbackModeStore> modes;
    std::unique_ptr<sql::SqlCallbackHistory> history;
    std::unique_ptr<sql::SqlCompensationStore> compensationStore;
    std::unique_ptr<sql::SqlRefundStore> refundStore;
    std::unique_ptr<sql::SqlPatrolStore> patrolStore;
    std::unique_ptr<sql::SqlOrderCloseStore> closeStore;
    std::unique_ptr<sql::SqlOutboxStore> outboxStore;
    std::unique_ptr<core::SetupService> setup;
    std::unique_ptr<core::TokenIssuer> tokens;
    std::unique_ptr<core::ConfirmPipeline> confirm;
    std::unique_ptr<core::CallbackPipeline> callbacks;
    /// The same stores and key store, configured callbacks.commit accepted_first (an agent
    /// beside this one with the other setting): the driver sends each delivery to one of
    /// the two, so both ways and their meetings are simulated.
    std::unique_ptr<core::CallbackPipeline> callbacksAcceptedFirst;
    /// The same again with no test hook, as an agent's HTTP route has: the driver tries
    /// its handleFromMemory() first for some deliveries, as the event loop does.
    std::unique_ptr<core::CallbackPipeline> callbacksMemoryFirst;
    std::unique_ptr<core::CallbackWorker> worker;
    std::unique_ptr<core::CompensationService> compensations;
    std::unique_ptr<core::RefundService> refunds;
    std::unique_ptr<core::Patrol> patrol;
    std::unique_ptr<core::OrderCloser> closer;
    std::unique_ptr<core::OutboxDispatcher> dispatcher;
};

} // namespace payonce::simulation
