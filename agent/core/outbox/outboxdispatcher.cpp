#include "core/outbox/outboxdispatcher.h"

#include "core/metrics/streamevents.h"
#include "core/ports/clock.h"
#include "core/ports/outboxstore.h"
#include "logging/categories.h"
#include "logging/logging.h"

#include <QRandomGenerator>

#include <algorithm>

namespace payonce::core {

OutboxDispatcher::OutboxDispatcher(OutboxStore &store, const OutboxHandlerRegistry &handlers, const Clock &clock,
                                   OutboxDispatcherOptions options, Random random)
    : m_store(store), m_handlers(handlers), m_clock(clock), m_options(std::move(options)), m_backoff(m_options.backoff),
      m_random(std::move(random))
{
    m_options.batchSize = std::max(1, m_options.batchSize);
    m_options.maxAttempts = std::max(1, m_options.maxAttempts);
    if (!m_random)
        m_random = [] { return QRandomGenerator::global()->generateDouble(); };
}

Result<DispatchStats> OutboxDispatcher::runOnce()
{
    DispatchStats stats;
    const qint64 claimedAt = m_clock.nowMs();
    const qint64 claimedUntil = claimedAt + m_options.claimLease.count();
    auto claimed = m_store.claim(m_options.dispatcherId, m_options.batchSize, claimedAt, claimedUntil);
    if (!claimed)
        return claimed.error();
    stats.claimed = int(claimed->size());
    if (claimed->isEmpty())
        return stats;

    const qint64 lastStart = claimedUntil - m_options.leaseMargin.count();
    QList<OutboxOutcome> outcomes;
    outcomes.reserve(claimed->size());
    QList<StreamEvent> deadLetters;
    for (const OutboxEvent &event : claimed.value()) {
        OutboxOutcome outcome;
        outcome.id = event.id;
        if (m_clock.nowMs() >= lastStart) {
            // Starting now could outlive the claim and race the dispatcher that reclaims it.
            outcome.kind = OutboxOutcome::Kind::Released;
            ++stats.released;
            outcomes.append(outcome);
            continue;
        }
        // The lines logged while it is delivered name the trace that made the event.
        std::optional<logging::ScopedFields> traced;
        if (!event.traceId.isEmpty())
            traced.emplace(QJsonObject{{QStringLiteral("trace_id"), event.traceId}});
        OutboxHandler *handler = m_handlers.handlerFor(event.eventType);
        const Result<void> result =
            handler ? handler->deliver(event)
                    : Result<void>(Error::make(ErrorCode::Misconfigured,
                                               QStringLiteral("no handler for event type %1").arg(event.eventType)));
        outcome.attempts = event.attempts + 1;
        if (result.ok()) {
            outcome.kind = OutboxOutcome::Kind::Delivered;
            ++stats.delivered;
        } else {
            outcome.error = result.error().internalMessage;
            if (outcome.attempts >= m_options.maxAttempts) {
                outcome.kind = OutboxOutcome::Kind::Dead;
                ++stats.dead;
                qCWarning(lcOutbox).noquote()
                    << "event" << event.eventId << "dead after" << outcome.attempts << "attempts:" << outcome.error;
                deadLetters.append(outboxDeadLetterEvent(event, outcome.attempts, outcome.error,
                                                         QStringLiteral("system:") + m_options.dispatcherId));
            } else {
                outcome.kind = OutboxOutcome::Kind::Retry;
                outcome.nextAttemptAtMs = m_clock.nowMs() + m_backoff.backoffFor(outcome.attempts, m_random()).count();
                ++stats.retried;
            }
        }
        outcomes.append(outcome);
    }

    auto applied = m_store.complete(m_options.dispatcherId, outcomes, m_clock.nowMs());
    if (!applied)
        return applied.error();
    stats.staleReports = int(outcomes.size()) - applied.value();
    if (stats.staleReports > 0)
        qCWarning(lcOutbox) << m_options.dispatcherId << ":" << stats.staleReports
                            << "outcomes arrived after the claim was taken over";
    // Only what the store recorded is announced. With stale reports the store does not say
    // which outcomes it refused: the dispatcher that took the claim over announces its own,
    // and the stream's outbox_dead count still moves.
    if (m_options.events && stats.staleReports == 0) {
        for (const StreamEvent &deadLetter : std::as_const(deadLetters))
            m_options.events(deadLetter);
    }
    return stats;
}

} // namespace payonce::core
