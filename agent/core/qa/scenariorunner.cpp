#include "scenariorunner_p.h"

namespace payonce::core {

using namespace scenario;

void ScenarioRunner::Private::execute(Run &run)
{
    QList<Group> groups = planGroups(run);
    setPhase(run, QStringLiteral("setup"));
    QString error = createOrders(run, groups);
    for (int g = 0; g < groups.size() && error.isEmpty(); ++g)
        error = runGroup(run, groups[g]);
    const QString prefix = orderPrefix(run.id);
    if (error.isEmpty())
        waitForSettling(run, prefix);
    if (!error.isEmpty()) {
        run.error = error;
        setPhase(run, QStringLiteral("error"));
        finish(run, QStringLiteral("error"), {});
        return;
    }
    auto report = store.report(prefix);
    if (!report) {
        run.error = report.error().internalMessage;
        setPhase(run, QStringLiteral("error"));
        finish(run, QStringLiteral("error"), {});
        return;
    }
    {
        std::lock_guard guard(run.layersMutex);
        report.value().confirmLayers = run.confirmLayers;
    }
    const QString status = report.value().passed() ? QStringLiteral("passed") : QStringLiteral("failed");
    finish(run, status, QString::fromUtf8(compact(report.value().toJson())));
    setPhase(run, status);
}

/// The run's orders split among its kinds (one group each, round robin), with their order
/// numbers and users.
QList<Group> ScenarioRunner::Private::planGroups(const Run &run) const
{
    QList<Group> groups;
    const QList<std::pair<ScenarioKind, QString>> kinds{{ScenarioKind::ConcurrentBurst, QStringLiteral("b")},
                                                        {ScenarioKind::RetryStorm, QStringLiteral("r")},
                                                        {ScenarioKind::MqRedelivery, QStringLiteral("m")},
                                                        {ScenarioKind::GatewayReplay, QStringLiteral("g")}};
    for (const auto &[kind, tag] : kinds) {
        if (run.params.kind == kind || run.params.kind == ScenarioKind::Mixed)
            groups.append(Group{kind, tag, {}, {}, {}});
    }
    for (int n = 0; n < run.params.orders; ++n) {
        Group &group = groups[n % groups.size()];
        group.orderNos.append(
            QStringLiteral("%1%2-%3").arg(orderPrefix(run.id), group.tag).arg(n + 1, 5, 10, QLatin1Char('0')));
        group.userIds.append(700000 + n);
        group.paymentNos.append(QString());
    }
    return groups;
}

QString ScenarioRunner::Private::runGroup(Run &run, Group &group)
{
    setPhase(run, scenarioKindName(group.kind));
    switch (group.kind) {
    case ScenarioKind::ConcurrentBurst: return runBurst(run, group);
    case ScenarioKind::RetryStorm: return runStorm(run, group);
    case ScenarioKind::MqRedelivery: return runQueueRedelivery(run, group);
    case ScenarioKind::GatewayReplay: return runGatewayReplay(run, group);
    case ScenarioKind::Mixed: break;
    }
    return {};
}

/// Every order PAID, the outbox drained, the deliveries quiet — or the wait's time is up:
/// either way the report that follows says what it found.
void ScenarioRunner::Private::waitForSettling(Run &run, const QString &prefix)
{
    setPhase(run, QStringLiteral("settling"));
    // Every order PAID, then the outbox drained: only then is a missing effect missing.
    const QString paid = waitUntil(options.settleTimeoutMs, QStringLiteral("orders paid"), [&]() -> Result<bool> {
        auto unpaid = store.unpaidOrders(prefix);
        if (!unpaid)
            return unpaid.error();
        return unpaid.value() == 0;
    });
    // Not an error of the run: the report says which orders are lost.
    if (!paid.isEmpty())
        qCWarning(lcCore).noquote() << "qa" << run.id << paid;
    const QString drained = waitUntil(options.settleTimeoutMs, QStringLiteral("outbox drained"), [&]() -> Result<bool> {
        auto report = store.report(prefix);
        if (!report)
            return report.error();
        return report.value().outboxPending == 0;
    });
    if (!drained.isEmpty())
        qCWarning(lcCore).noquote() << "qa" << run.id << drained;
    // Copies the simulator sent may still be on their way after the order was paid:
    // the report counts them once no delivery has arrived for a quiet period.
    qint64 seen = -1;
    const QString quiet = waitUntil(options.settleTimeoutMs, QStringLiteral("deliveries quiet"), [&]() -> Result<bool> {
        auto report = store.report(prefix);
        if (!report)
            return report.error();
        const bool same = report.value().deliveries == seen;
        seen = report.value().deliveries;
        if (!same)
            sleepFor(kQuietPeriod);
        return same;
    });
    if (!quiet.isEmpty())
        qCWarning(lcCore).noquote() << "qa" << run.id << quiet;
}

void ScenarioRunner::Private::finish(Run &run, const QString &status, const QString &report)
{
    auto finished = store.finish(run.id, options.agentId, status, report, clock.nowMs());
    if (!finished)
        qCWarning(lcCore).noquote() << "qa" << run.id << "end not stored:" << finished.error().internalMessage;
    else if (!finished.value())
        qCWarning(lcCore).noquote() << "qa" << run.id << "ended" << status
                                    << "after its lease ran out: it stays abandoned";
}

void ScenarioRunner::Private::runThread(std::unique_ptr<Run> run)
{
    try {
        execute(*run);
    } catch (const StopRequested &) {
        if (leaseLost) {
            qCWarning(lcCore).noquote() << "qa" << run->id << "lost its lease (this agent was out of reach longer than"
                                        << options.leaseMs << "ms): stopped, it stays abandoned";
        } else {
            run->error = QStringLiteral("the agent stopped during the run");
            run->phase = QStringLiteral("error");
            (void)store.saveProgress(run->id, QString::fromUtf8(compact(progressJson(*run))));
            finish(*run, QStringLiteral("error"), {});
        }
    }
    std::lock_guard guard(mutex);
    running = false;
    leasedRun.clear();
}

void ScenarioRunner::Private::keepLeases()
{
    const std::chrono::milliseconds interval(std::max(1, options.leaseMs / 3));
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, interval, [this] { return stopping.load(); })) {
        lock.unlock();
        renewLease();
        writeDownAbandoned();
        lock.lock();
    }
}

void ScenarioRunner::Private::renewLease()
{
    QString id;
    {
        std::lock_guard guard(mutex);
        id = leasedRun;
    }
    if (id.isEmpty())
        return;
    const qint64 now = clock.nowMs();
    auto renewed = store.renewLease(id, options.agentId, now, now + options.leaseMs);
    if (!renewed) {
        // Tried again at the next beat; the lease holds until then.
        qCWarning(lcCore).noquote() << "qa" << id << "lease not renewed:" << renewed.error().internalMessage;
        return;
    }
    if (!renewed.value()) {
        {
            std::lock_guard guard(mutex);
            if (leasedRun != id)
                return; // that run ended meanwhile
            leaseLost = true;
        }
        wake.notify_all();
    }
}

void ScenarioRunner::Private::writeDownAbandoned()
{
    auto abandoned = store.abandonExpired(clock.nowMs());
    if (!abandoned) {
        qCWarning(lcCore).noquote() << "qa: abandoned runs not written down:" << abandoned.error().internalMessage;
        return;
    }
    for (const QaRun &run : std::as_const(abandoned.value())) {
        qCWarning(lcCore).noquote() << "qa" << run.scenarioId << "abandoned: its agent" << run.agentId
                                    << "stopped renewing its lease, which ended at" << run.leaseUntil;
        if (!options.publish)
            continue;
        QJsonObject progress = QJsonDocument::fromJson(run.progress.toUtf8()).object();
        progress.insert(QStringLiteral("phase"), QStringLiteral("abandoned"));
        progress.insert(QStringLiteral("agent_id"), run.agentId);
        progress.insert(QStringLiteral("lease_until"), run.leaseUntil);
        options.publish(StreamEvent{QStringLiteral("scenario.progress"),
                                    run.scenarioId,
                                    QString::fromUtf8(compact(progress)),
                                    run.startedBy,
                                    {}});
    }
}

ScenarioRunner::ScenarioRunner(QaRunStore &store, ScenarioDriver &driver, AuditWriter &audit, const Clock &clock,
                               ScenarioRunnerOptions options)
    : d(std::make_unique<Private>(store, driver, audit, clock, std::move(options)))
{
    d->leaseKeeper = std::thread([this] { d->keepLeases(); });
}

void ScenarioRunner::requestStop()
{
    {
        std::lock_guard guard(d->mutex);
        d->stopping = true;
    }
    d->wake.notify_all();
}

ScenarioRunner::~ScenarioRunner()
{
    requestStop();
    if (d->thread.joinable())
        d->thread.join();
    if (d->leaseKeeper.joinable())
        d->leaseKeeper.join();
}

Result<QString> ScenarioRunner::start(const ScenarioParams &params, const QString &actor, const QString &reason,
                                      const QString &traceId)
{
    std::unique_lock lock(d->mutex);
    if (d->stopping)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("the agent is stopping"));
    if (d->running)
        return Error::make(ErrorCode::Conflict, QStringLiteral("a scenario is running in this agent"),
                           QStringLiteral("a scenario is already running in this agent; start the next when it ends"));
    if (d->thread.joinable())
        d->thread.join(); // the previous run's thread has finished (running is false)

    auto run = std::make_unique<Private::Run>();
    run->id = QStringLiteral("qa-%1").arg(QRandomGenerator::system()->generate(), 8, 16, QLatin1Char('0'));
    run->params = params;
    run->actor = actor;
    run->reason = reason;
    run->traceId = traceId;
    const QString paramsText = QString::fromUtf8(compact(params.toJson()));
    const qint64 now = d->clock.nowMs();
    QaRun row{run->id,
              scenarioKindName(params.kind),
              paramsText,
              QStringLiteral("running"),
              {},
              {},
              actor,
              now,
              0,
              d->options.agentId,
              now + d->options.leaseMs};
    if (auto created = d->store.create(row); !created)
        return created.error();
    if (auto audited = d->audit.append({actor,
                                        QStringLiteral("qa.scenario.start"),
                                        QStringLiteral("scenario:") + run->id,
                                        {},
                                        paramsText,
                                        reason,
                                        traceId});
        !audited)
        return audited.error();
    const QString id = run->id;
    d->running = true;
    d->leasedRun = id;
    d->leaseLost = false;
    d->thread = std::thread([this, run = std::move(run)]() mutable { d->runThread(std::move(run)); });
    return id;
}

} // namespace payonce::core
