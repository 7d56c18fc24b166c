#pragma once

#include "core/common/result.h"
#include "core/qa/qascenario.h"

#include <QString>

#include <functional>
#include <memory>

namespace payonce {
struct StreamEvent;
}

namespace payonce::core {

class AuditWriter;
class Clock;
class QaRunStore;
class ScenarioDriver;

struct ScenarioRunnerOptions {
    /// Where progress goes besides qa_runs.progress: the live stream's "scenario.progress"
    /// events. Called on the runner's thread; empty: nobody listens.
    std::function<void(const StreamEvent &)> publish;
    /// How long the run waits for every order to be PAID and the outbox to drain after
    /// the last notification was sent, before it reports what it finds.
    int settleTimeoutMs = 120000;
    /// How long a confirm answered 503 (gateway down, breaker open) is tried again, as a
    /// user clicking again would, before the run gives up with status error.
    int confirmRetryMs = 60000;
    /// "Bearer <qa.token>": the runner's own credential, sent with the set-up calls to the
    /// targets. A caller's token is never passed to the runner, so it never leaves the agent.
    QByteArray authorization;
    /// This agent's instance id: the run's lease holder, named in qa_runs.agent_id.
    QString agentId;
    /// A run's lease (QaRunStore): renewed every third of it while the run lasts, so a
    /// run whose agent died is shown abandoned at most this long after its last renewal.
    /// The same keeper writes down, on every agent, the runs whose lease ran out.
    int leaseMs = 15000;
};

/// Runs QA scenarios (docs/openapi.yaml, "QA scenarios") in the background, one at a time per agent
/// (the simulated platform's faults and callback targets are global while a run lasts).
///
/// A run, on its own thread (never the HTTP event loop), with `concurrency` threads for
/// the per-order work:
///  1. a qa_runs row (status running) and an audit row (actor, reason);
///  2. set-up through the first target's HTTP API: one SKU with enough stock, `orders`
///     orders named `<scenario_id>-<k>-<n>` (k: b burst, r storm, g gateway replay, m
///     queue redelivery; mixed splits the orders among the four), spread over the targets;
///  3. per kind, in the order b, r, m, g: confirms through the targets' HTTP API as a user
///     would (token, then confirm with an Idempotency-Key), the simulator pays each trade
///     and notifies, and the kind's duplication is applied (see ScenarioKind);
///  4. waits until every order is PAID and the outbox has drained (settleTimeoutMs), then
///     stores the invariant report computed by SQL (status passed or failed).
/// Any step that cannot be done (a target or the simulator not answering, a confirm
/// refused) ends the run with status error and the reason in its progress.
/// Progress (phase and counts) is stored in qa_runs.progress and published.
///
/// A lease keeper thread, for the runner's lifetime, renews the running run's lease every
/// leaseMs / 3 and writes down as abandoned any run (of any agent) whose lease ran out,
/// publishing a "scenario.progress" event with phase "abandoned" for it. A run that lost
/// its lease (this agent was frozen past it, or the database was out of reach that long)
/// stops at once and writes no end of its own: it stays abandoned.
class ScenarioRunner {
public:
    ScenarioRunner(QaRunStore &store, ScenarioDriver &driver, AuditWriter &audit, const Clock &clock,
                   ScenarioRunnerOptions options = {});
    /// Stops a run in progress (it ends with status error) and waits for its threads.
    ~ScenarioRunner();
    ScenarioRunner(const ScenarioRunner &) = delete;
    ScenarioRunner &operator=(const ScenarioRunner &) = delete;

    /// A run in progress ends soon with status error (its waits wake up; calls in flight
    /// finish first). Does not wait: the destructor joins. Any thread.
    void requestStop();

    /// Starts a run and returns its scenario_id at once. Conflict when a run is going in
    /// this agent. `actor` (who asked) is audited; the set-up calls to the targets carry
    /// options.authorization, the runner's own credential.
    Result<QString> start(const ScenarioParams &params, const QString &actor, const QString &reason,
                          const QString &traceId = {});

    /// Every order of a scenario starts with this.
    static QString orderPrefix(const QString &scenarioId) { return scenarioId + QLatin1Char('-'); }

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace payonce::core
