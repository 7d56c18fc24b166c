#pragma once

#include "core/common/result.h"
#include "core/gateways/retrypolicy.h"
#include "core/outbox/outboxhandler.h"
#include "core/ports/eventsink.h"

#include <QString>

#include <chrono>
#include <functional>

namespace payonce::core {

class Clock;
class OutboxStore;

struct OutboxDispatcherOptions {
    /// This dispatcher's name in claimed_by; unique per running dispatcher (agent + thread).
    QString dispatcherId;
    int batchSize = 100;
    /// How long a claim holds. A dispatcher that dies leaves its rows to the others after
    /// this; it must exceed the time a batch's deliveries take (see leaseMargin).
    std::chrono::milliseconds claimLease{std::chrono::seconds(30)};
    /// No delivery starts later than claimedUntil - leaseMargin: the rest of the batch is
    /// released, so a slow batch never outlives its lease. Keep it above a handler's timeout.
    std::chrono::milliseconds leaseMargin{std::chrono::seconds(15)};
    /// After this many failed attempts the event is dead (>= 1).
    int maxAttempts = 10;
    /// Backoff between attempts: initialBackoff * multiplier^(attempt-1), jittered, capped
    /// (RetryOptions::maxAttempts is not used here).
    RetryOptions backoff{1, std::chrono::milliseconds(1000), 2, std::chrono::minutes(10), 0.2};
    /// Told of every event that went dead (outbox.dead_letter), once it is recorded.
    EventSink events = {};
};

struct DispatchStats {
    int claimed = 0;
    int delivered = 0;
    int retried = 0;
    int dead = 0;
    int released = 0;
    int staleReports = 0; ///< outcomes the store refused (our claim was taken over)
};

/// The outbox dispatcher (docs/design.md, "Outbox and patrol"): runOnce() claims a batch in a
/// short transaction, delivers each event outside it to the handler registered for its
/// type, and records the outcomes in a second short transaction — delivered; or a retry
/// at now + backoff with jitter; or dead after maxAttempts, with the last error kept.
///
/// Not thread-safe: one dispatcher per thread, each with its own dispatcherId; several
/// dispatchers (threads or agents) may share one database. Blocking; never run it on the
/// HTTP event-loop thread.
class OutboxDispatcher {
public:
    using Random = std::function<double()>; ///< uniform in [0, 1)

    OutboxDispatcher(OutboxStore &store, const OutboxHandlerRegistry &handlers, const Clock &clock,
                     OutboxDispatcherOptions options, Random random = {});

    /// One claim-deliver-report round. claimed == 0 means nothing was due.
    Result<DispatchStats> runOnce();

    const OutboxDispatcherOptions &options() const { return m_options; }

private:
    OutboxStore &m_store;
    const OutboxHandlerRegistry &m_handlers;
    const Clock &m_clock;
    OutboxDispatcherOptions m_options;
    RetryPolicy m_backoff;
    Random m_random;
};

} // namespace payonce::core
