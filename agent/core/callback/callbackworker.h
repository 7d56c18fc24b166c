#pragma once

#include "core/callback/callbackpipeline.h"

#include <QHash>

#include <functional>
#include <mutex>
#include <optional>

namespace payonce::core {

/// Finishes `accepted` callback log rows (after a crash, after accept-only mode) through
/// CallbackPipeline::finishAccepted; a row without a stored delivery (written from the
/// platform's query by the patrol or the closer) through a new query and settleConfirmed.
/// A row whose lock is busy or lost is not finished: it is tried again next run.
/// runOnce() does nothing while the mode is accept_only.
/// Rows younger than minAgeMs are left to the delivery that is still processing them.
/// A row refused as a stale fence (the order carries a newer token) stays `accepted` and
/// is never counted finished: it is tried again on the next run with a fresh token, and
/// from its StaleFenceTriesBeforeFinding-th stale-fence refusal on (counted by this worker
/// while the row stays accepted), each refusal raises (or sees again) a `stuck_accepted`
/// finding with reason `stale_fence`.
/// Thread-safe (each runOnce works alone; two workers on two agents are safe — the lock,
/// L5 and the side-effect keys decide).
class CallbackWorker {
public:
    struct Report {
        bool modeRead = false; ///< the shared mode was read (acceptOnly says what it is)
        bool acceptOnly = false;
        int seen = 0;
        int finished = 0;
        int failed = 0;     ///< not finished, stale fences included
        int staleFence = 0; ///< refused as a stale fence, left `accepted` for the next run
        int busy = 0;       ///< its lock held elsewhere or lost, or accept-only began: left `accepted`
        int byQuery = 0;    ///< rows without a delivery, settled through the platform's query
    };
    /// A row refused as a stale fence this many times raises a finding.
    static constexpr int StaleFenceTriesBeforeFinding = 5;
    CallbackWorker(CallbackPipeline &pipeline, CallbackStore &store, CallbackModeStore &modes, const Clock &clock,
                   qint64 minAgeMs = 5000);
    /// The platforms a row without a stored delivery is settled through (a query by its
    /// out_trade_no). Without them such rows are left to the patrol.
    void setGateways(std::function<PaymentGateway *(Channel)> gateways) { m_gateways = std::move(gateways); }
    Report runOnce(int limit = 100);
    /// A SUCCESS that a durable row backs without having settled it (a busy or lost lock,
    /// a stale fence, accept-only): the row stays `accepted`.
    static bool leavesTheRowAccepted(const CallbackOutcome &outcome);

private:
    CallbackPipeline &m_pipeline;
    CallbackStore &m_store;
    CallbackModeStore &m_modes;
    const Clock &m_clock;
    qint64 m_minAgeMs;
    std::function<PaymentGateway *(Channel)> m_gateways;

    /// A row without a delivery, settled through the platform's query; nullopt: left as it
    /// is (no gateway, the query failed, or the platform does not report it paid by its pay_no).
    std::optional<CallbackOutcome> settleByQuery(const AcceptedCallback &row);
    void staleFenceRefused(const AcceptedCallback &row);
    std::mutex m_mutex;
    QHash<QString, int> m_staleTries; ///< consecutive stale-fence refusals per channel:pay_no
};

} // namespace payonce::core
