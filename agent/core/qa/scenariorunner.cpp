#include "core/qa/scenariorunner.h"

#include "core/ports/auditwriter.h"
#include "core/ports/clock.h"
#include "core/ports/qarunstore.h"
#include "core/ports/scenariodriver.h"

#include "logging/categories.h"
#include "shared/streammessage.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace payonce::core {

namespace {

using namespace std::chrono_literals;

// WeChat Pay's re-delivery intervals in seconds (docs/design.md): a retry storm re-sends on
// this schedule × time_scale.
constexpr int kWeChatScheduleS[] = {15,   15,   30,    180,   600,   1200,  1800, 1800,
                                    1800, 3600, 10800, 10800, 10800, 21600, 21600};
const QString kChannel = QStringLiteral("wechat");
// Each order is one unit of the scenario's SKU, paid 0.01 … the amount varies per order
// so a mix-up between orders would show as an amount mismatch.
constexpr int kRewardPoints = 10;
const QString kCouponTemplate = QStringLiteral("QA");

struct StopRequested {};

// No delivery for this long after the last send: the simulator's copies have all arrived.
constexpr std::chrono::milliseconds kQuietPeriod{1500};

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QString describe(const DriverAnswer &answer)
{
    if (answer.status == 0)
        return answer.transportError;
    return QStringLiteral("%1 %2").arg(answer.status).arg(QString::fromUtf8(answer.body.left(300)));
}

/// The kinds a run's orders are split among, with their order_no tags.
struct Group {
    ScenarioKind kind;
    QString tag;
    QStringList orderNos;
    QList<qint64> userIds;
    QStringList paymentNos;
};

} // namespace

struct ScenarioRunner::Private {
    QaRunStore &store;
    ScenarioDriver &driver;
    AuditWriter &audit;
    const Clock &clock;
    ScenarioRunnerOptions options;

    std::mutex mutex;
    std::condition_variable wake; // interrupts waits when stopping or when the lease is lost
    std::thread thread;
    bool running = false;
    std::atomic<bool> stopping{false};
    QString leasedRun;                  ///< the run whose lease the keeper renews; guarded by mutex
    std::atomic<bool> leaseLost{false}; ///< the running run's lease was lost: it stops
    std::thread leaseKeeper;            ///< started last in the constructor

    Private(QaRunStore &s, ScenarioDriver &dr, AuditWriter &a, const Clock &c, ScenarioRunnerOptions o)
        : store(s), driver(dr), audit(a), clock(c), options(std::move(o))
    {
    }

    /// One run's state, owned by its thread.
    struct Run {
        QString id;
        ScenarioParams params;
        QString actor;
        QString reason;
        QString traceId;
        QString phase;
        std::atomic<qint64> created{0};
        std::atomic<qint64> confirmed{0};
        std::atomic<qint64> paidAtSim{0};
        std::atomic<qint64> redeliveries{0};
        std::atomic<qint64> outboxRedelivered{0};
        std::mutex layersMutex;
        QMap<QString, qint64> confirmLayers;
        QString error;
    };

    /// The run in progress must end: the agent is stopping, or the run lost its lease.
    bool halted() const { return stopping || leaseLost; }

    /// Waits; false when the run must end (then at once). Safe on any thread.
    bool pause(std::chrono::milliseconds duration)
    {
        std::unique_lock lock(mutex);
        return !wake.wait_for(lock, duration, [this] { return halted(); });
    }
    /// The same on the run's own thread, which unwinds when stopping.
    void sleepFor(std::chrono::milliseconds duration)
    {
        if (!pause(duration))
            throw StopRequested();
    }

    /// body(i) for i in [0, n) on `threads` threads; the first failure is returned.
    QString forEach(int n, int threads, const std::function<QString(int)> &body)
    {
        std::atomic<int> next{0};
        std::mutex failedMutex;
        QString failed;
        std::vector<std::thread> workers;
        for (int t = 0; t < std::min(threads, n); ++t) {
            workers.emplace_back([&] {
                for (int i = next++; i < n && !halted(); i = next++) {
                    QString error = body(i);
                    if (!error.isEmpty()) {
                        std::lock_guard guard(failedMutex);
                        if (failed.isEmpty())
                            failed = error;
                        next = n; // the others stop after their current item
                    }
                }
            });
        }
        for (std::thread &worker : workers)
            worker.join();
        if (halted())
            throw StopRequested();
        return failed;
    }

    QJsonObject progressJson(Run &run) const
    {
        QJsonObject layers;
        {
            std::lock_guard guard(run.layersMutex);
            for (auto it = run.confirmLayers.cbegin(); it != run.confirmLayers.cend(); ++it)
                layers.insert(it.key(), it.value());
        }
        QJsonObject progress{{QStringLiteral("phase"), run.phase},
                             {QStringLiteral("orders"), run.params.orders},
                             {QStringLiteral("created"), run.created.load()},
                             {QStringLiteral("confirmed"), run.confirmed.load()},
                             {QStringLiteral("paid_at_sim"), run.paidAtSim.load()},
                             {QStringLiteral("redeliveries"), run.redeliveries.load()},
                             {QStringLiteral("outbox_redelivered"), run.outboxRedelivered.load()},
                             {QStringLiteral("confirm_layers"), layers}};
        if (!run.error.isEmpty())
            progress.insert(QStringLiteral("error"), run.error);
        return progress;
    }

    void setPhase(Run &run, const QString &phase)
    {
        run.phase = phase;
        const QJsonObject progress = progressJson(run);
        const QString text = QString::fromUtf8(compact(progress));
        if (auto saved = store.saveProgress(run.id, text); !saved)
            qCWarning(lcCore).noquote() << "qa" << run.id << "progress not stored:" << saved.error().internalMessage;
        if (options.publish)
            options.publish(StreamEvent{QStringLiteral("scenario.progress"), run.id, text, run.actor, run.reason});
    }

    DriverAnswer agentCall(const Run &run, int index, const QByteArray &method, const QString &path,
                           const QJsonObject &body, ScenarioDriver::Headers headers)
    {
        const QString &target = run.params.targets.at(index % run.params.targets.size());
        return driver.agent(target, method, path, body.isEmpty() ? QByteArray() : compact(body), headers);
    }

    /// Confirms by the layer that decided them; an answer other than 200 is counted as
    /// "<layer>/<status>" ("none/503": the gateway failed; "idempotency_key/503": the
    /// stored failure replayed), no answer at all as "no_answer".
    void countLayer(Run &run, const DriverAnswer &answer)
    {
        QString layer = answer.layer.isEmpty() ? QStringLiteral("no_answer") : QString::fromLatin1(answer.layer);
        if (answer.status != 200 && answer.status != 0)
            layer += QStringLiteral("/%1").arg(answer.status);
        std::lock_guard guard(run.layersMutex);
        ++run.confirmLayers[layer];
    }

    /// A token, then a confirm with `key`: the answer (and the token in *tokenUsed).
    DriverAnswer confirmOnce(Run &run, int index, const QString &orderNo, qint64 userId, const QString &key,
                             QString *tokenUsed = nullptr)
    {
        const ScenarioDriver::Headers user{{"X-User-Id", QByteArray::number(userId)}};
        const DriverAnswer token = agentCall(run, index, "POST", QStringLiteral("/api/v1/payments/token"),
                                             {{QStringLiteral("order_no"), orderNo}}, user);
        if (token.status != 201)
            return token;
        const QString tokenText =
            QJsonDocument::fromJson(token.body).object().value(QStringLiteral("token")).toString();
        if (tokenUsed)
            *tokenUsed = tokenText;
        return confirmWithKey(run, index, orderNo, userId, key, tokenText);
    }

    DriverAnswer confirmWithKey(Run &run, int index, const QString &orderNo, qint64 userId, const QString &key,
                                const QString &token)
    {
        ScenarioDriver::Headers headers{{"X-User-Id", QByteArray::number(userId)}, {"Idempotency-Key", key.toUtf8()}};
        const DriverAnswer answer = agentCall(run, index, "POST", QStringLiteral("/api/v1/payments/confirm"),
                                              {{QStringLiteral("token"), token},
                                               {QStringLiteral("order_no"), orderNo},
                                               {QStringLiteral("channel"), kChannel}},
                                              headers);
        countLayer(run, answer);
        return answer;
    }

    /// An accepted confirm: the payment_no, and the key and token that got it.
    struct Confirmed {
        QString paymentNo;
        QString key;
        QString token;
        QString error; ///< set when it was not accepted
    };

    /// Confirms until the agent answers 200 (a user clicking again after a 503 or a busy
    /// answer, each time with a new token and key).
    Confirmed confirmUntilAccepted(Run &run, int index, const QString &orderNo, qint64 userId, const QString &keyPrefix)
    {
        const qint64 deadline = clock.nowMs() + options.confirmRetryMs;
        for (int attempt = 1;; ++attempt) {
            Confirmed out;
            out.key = QStringLiteral("%1-%2").arg(keyPrefix).arg(attempt);
            const DriverAnswer answer = confirmOnce(run, index, orderNo, userId, out.key, &out.token);
            if (answer.status == 200) {
                ++run.confirmed;
                out.paymentNo =
                    QJsonDocument::fromJson(answer.body).object().value(QStringLiteral("payment_no")).toString();
                return out;
            }
            const bool retryable = answer.status == 503 || answer.status == 409 || answer.status == 0;
            if (!retryable || clock.nowMs() > deadline)
                return {{}, {}, {}, QStringLiteral("confirm %1: %2").arg(orderNo, describe(answer))};
            if (!pause(std::chrono::milliseconds(std::min(2000, 100 * attempt))))
                return {{}, {}, {}, QStringLiteral("stopping")};
        }
    }

    QString simPay(Run &run, const QString &paymentNo)
    {
        const DriverAnswer paid = driver.sim(
            "POST", QStringLiteral("/sim/pay"),
            compact({{QStringLiteral("channel"), kChannel}, {QStringLiteral("out_trade_no"), paymentNo}}));
        if (paid.status != 200)
            return QStringLiteral("sim pay %1: %2").arg(paymentNo, describe(paid));
        ++run.paidAtSim;
        return {};
    }

    QString simControl(const QString &path, const QJsonObject &body)
    {
        const DriverAnswer answer = driver.sim("POST", path, compact(body));
        return answer.status == 200 ? QString() : QStringLiteral("sim %1: %2").arg(path, describe(answer));
    }

    QString confirmAndPay(Run &run, Group &group)
    {
        return forEach(int(group.orderNos.size()), run.params.concurrency, [&](int i) -> QString {
            const Confirmed confirmed = confirmUntilAccepted(run, i, group.orderNos.at(i), group.userIds.at(i),
                                                             group.orderNos.at(i));
            if (!confirmed.error.isEmpty())
                return confirmed.error;
            group.paymentNos[i] = confirmed.paymentNo;
            return simPay(run, confirmed.paymentNo);
        });
    }

    QString createOrders(Run &run, QList<Group> &groups);
    QString runBurst(Run &run, Group &group);
    QString runStorm(Run &run, Group &group);
    QString runQueueRedelivery(Run &run, Group &group);
    QString runGatewayReplay(Run &run, Group &group);
    template <typename Predicate>
    QString waitUntil(qint64 timeoutMs, const QString &what, Predicate done);
    void execute(Run &run);
    void finish(Run &run, const QString &status, const QString &report);
    void runThread(std::unique_ptr<Run> run);
    void keepLeases();
    void renewLease();
    void writeDownAbandoned();
};

QString ScenarioRunner::Private::createOrders(Run &run, QList<Group> &groups)
{
    const QString skuId = run.id + QStringLiteral("-SKU");
    const ScenarioDriver::Headers auth{{"Authorization", options.authorization}};
    const DriverAnswer sku = agentCall(run, 0, "PUT", QStringLiteral("/api/v1/skus/") + skuId,
                                       {{QStringLiteral("stock"), run.params.orders}}, auth);
    if (sku.status != 200)
        return QStringLiteral("PUT sku: %1").arg(describe(sku));
    struct Item {
        int group;
        int index;
    };
    QList<Item> items;
    for (int g = 0; g < groups.size(); ++g) {
        for (int i = 0; i < groups[g].orderNos.size(); ++i)
            items.append({g, i});
    }
    return forEach(int(items.size()), run.params.concurrency, [&](int n) -> QString {
        const Group &group = groups.at(items.at(n).group);
        const int i = items.at(n).index;
        const QJsonObject order{
            {QStringLiteral("order_no"), group.orderNos.at(i)},
            {QStringLiteral("user_id"), group.userIds.at(i)},
            {QStringLiteral("amount"), QStringLiteral("%1.%2").arg(1 + n / 100).arg(n % 100, 2, 10, QLatin1Char('0'))},
            {QStringLiteral("items"),
             QJsonArray{QJsonObject{{QStringLiteral("sku_id"), skuId}, {QStringLiteral("qty"), 1}}}},
            {QStringLiteral("reward_coupon_template"), kCouponTemplate},
            {QStringLiteral("reward_points"), kRewardPoints}};
        const DriverAnswer created = agentCall(run, n, "POST", QStringLiteral("/api/v1/orders"), order, auth);
        if (created.status != 201)
            return QStringLiteral("POST order %1: %2").arg(group.orderNos.at(i), describe(created));
        ++run.created;
        return {};
    });
}

/// Every notification `duplicates` times at one instant, spread across the targets: the
/// simulator sends ceil(duplicates / targets) identical copies to each target at once.
QString ScenarioRunner::Private::runBurst(Run &run, Group &group)
{
    const int copies = (run.params.duplicates + int(run.params.targets.size()) - 1) / int(run.params.targets.size());
    QJsonArray urls;
    for (const QString &target : std::as_const(run.params.targets))
        urls.append(QString(target + QStringLiteral("/api/v1/callbacks/{channel}")));
    QString error = simControl(QStringLiteral("/sim/callback-targets"),
                               {{QStringLiteral("channel"), kChannel}, {QStringLiteral("urls"), urls}});
    if (error.isEmpty())
        error = simControl(QStringLiteral("/sim/faults"),
                           {{QStringLiteral("channel"), kChannel}, {QStringLiteral("duplicate"), copies}});
    if (error.isEmpty())
        error = confirmAndPay(run, group);
    // Back to one copy to the trade's own notify_url, whatever happened.
    const QString reset = simControl(QStringLiteral("/sim/faults"), {{QStringLiteral("channel"), kChannel}});
    const QString untarget = simControl(
        QStringLiteral("/sim/callback-targets"),
        {{QStringLiteral("channel"), kChannel}, {QStringLiteral("urls"), QJsonArray()}});
    return !error.isEmpty() ? error : !reset.isEmpty() ? reset : untarget;
}

/// The platform's re-delivery schedule × time_scale: after the first delivery, each
/// notification is sent again `duplicates` times, at the schedule's intervals.
QString ScenarioRunner::Private::runStorm(Run &run, Group &group)
{
    if (QString error = confirmAndPay(run, group); !error.isEmpty())
        return error;
    for (int k = 0; k < run.params.duplicates; ++k) {
        const int intervalS = kWeChatScheduleS[k % std::size(kWeChatScheduleS)];
        sleepFor(std::chrono::milliseconds(qint64(intervalS * 1000.0 * run.params.timeScale)));
        const QString error = forEach(int(group.paymentNos.size()), run.params.concurrency, [&](int i) -> QString {
            const DriverAnswer sent = driver.sim(
                "POST", QStringLiteral("/sim/notifications/%1/redeliver").arg(group.paymentNos.at(i)), {});
            if (sent.status != 200)
                return QStringLiteral("redeliver %1: %2").arg(group.paymentNos.at(i), describe(sent));
            ++run.redeliveries;
            return {};
        });
        if (!error.isEmpty())
            return error;
        setPhase(run, run.phase); // the same phase, the counts of this round
    }
    return {};
}

template <typename Predicate>
QString ScenarioRunner::Private::waitUntil(qint64 timeoutMs, const QString &what, Predicate done)
{
    const qint64 deadline = clock.nowMs() + timeoutMs;
    for (;;) {
        auto result = done();
        if (!result)
            return QStringLiteral("%1: %2").arg(what, result.error().internalMessage);
        if (result.value())
            return {};
        if (clock.nowMs() > deadline)
            return QStringLiteral("%1: not within %2 ms").arg(what).arg(timeoutMs);
        sleepFor(100ms);
    }
}

/// A queue that redelivers: once the order.paid events of these orders are delivered,
/// each is put back to pending and the dispatchers deliver it a second time (receivers
/// dedupe by Idempotency-Key = event id; the effects are not the outbox's to repeat).
QString ScenarioRunner::Private::runQueueRedelivery(Run &run, Group &group)
{
    if (QString error = confirmAndPay(run, group); !error.isEmpty())
        return error;
    const QString prefix = orderPrefix(run.id) + group.tag + QLatin1Char('-');
    const qint64 expected = group.orderNos.size();
    const auto allDelivered = [&]() -> Result<bool> {
        auto delivered = store.deliveredOutboxEvents(prefix);
        if (!delivered)
            return delivered.error();
        return delivered.value() >= expected;
    };
    if (QString error = waitUntil(options.settleTimeoutMs, QStringLiteral("order.paid delivered"), allDelivered);
        !error.isEmpty())
        return error;
    auto redelivered = store.redeliverOutboxEvents(prefix, clock.nowMs());
    if (!redelivered)
        return QStringLiteral("outbox redelivery: %1").arg(redelivered.error().internalMessage);
    run.outboxRedelivered += redelivered.value();
    return waitUntil(options.settleTimeoutMs, QStringLiteral("order.paid delivered again"), allDelivered);
}

/// The gateway times out (the simulator answers 504 to every create): the user's confirm
/// fails (503) and is replayed with the same key; then the gateway recovers and the user
/// confirms again (a new token and key: the failed payment record is reused), replays
/// that confirm once more (L1 answers it), and pays.
QString ScenarioRunner::Private::runGatewayReplay(Run &run, Group &group)
{
    QString error = simControl(QStringLiteral("/sim/faults"), {{QStringLiteral("channel"), kChannel},
                                                               {QStringLiteral("error_rate"), 1.0},
                                                               {QStringLiteral("error_status"), 504}});
    if (error.isEmpty()) {
        error = forEach(int(group.orderNos.size()), run.params.concurrency, [&](int i) -> QString {
            const QString key = group.orderNos.at(i) + QStringLiteral("-timeout");
            QString token;
            const DriverAnswer first = confirmOnce(run, i, group.orderNos.at(i), group.userIds.at(i), key, &token);
            if (first.status == 200)
                return QStringLiteral("confirm %1 succeeded through a failing gateway").arg(group.orderNos.at(i));
            // The client replays the very same request (key, token, body) after the timeout.
            confirmWithKey(run, i, group.orderNos.at(i), group.userIds.at(i), key, token);
            return {};
        });
    }
    const QString reset = simControl(QStringLiteral("/sim/faults"), {{QStringLiteral("channel"), kChannel}});
    if (!error.isEmpty() || !reset.isEmpty())
        return !error.isEmpty() ? error : reset;
    return forEach(int(group.orderNos.size()), run.params.concurrency, [&](int i) -> QString {
        const QString orderNo = group.orderNos.at(i);
        const QString keyPrefix = orderNo + QStringLiteral("-again");
        const Confirmed confirmed = confirmUntilAccepted(run, i, orderNo, group.userIds.at(i), keyPrefix);
        if (!confirmed.error.isEmpty())
            return confirmed.error;
        group.paymentNos[i] = confirmed.paymentNo;
        // The same request once more after it succeeded (a client retrying a lost answer):
        // the stored answer from the L1 record, never a second payment.
        confirmWithKey(run, i, orderNo, group.userIds.at(i), confirmed.key, confirmed.token);
        return simPay(run, confirmed.paymentNo);
    });
}

void ScenarioRunner::Private::execute(Run &run)
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

    setPhase(run, QStringLiteral("setup"));
    QString error = createOrders(run, groups);
    for (int g = 0; g < groups.size() && error.isEmpty(); ++g) {
        Group &group = groups[g];
        setPhase(run, scenarioKindName(group.kind));
        switch (group.kind) {
        case ScenarioKind::ConcurrentBurst: error = runBurst(run, group); break;
        case ScenarioKind::RetryStorm: error = runStorm(run, group); break;
        case ScenarioKind::MqRedelivery: error = runQueueRedelivery(run, group); break;
        case ScenarioKind::GatewayReplay: error = runGatewayReplay(run, group); break;
        case ScenarioKind::Mixed: break;
        }
    }
    const QString prefix = orderPrefix(run.id);
    if (error.isEmpty()) {
        setPhase(run, QStringLiteral("settling"));
        // Every order PAID, then the outbox drained: only then is a missing effect missing.
        error = waitUntil(options.settleTimeoutMs, QStringLiteral("orders paid"), [&]() -> Result<bool> {
            auto unpaid = store.unpaidOrders(prefix);
            if (!unpaid)
                return unpaid.error();
            return unpaid.value() == 0;
        });
        if (!error.isEmpty()) {
            // Not an error of the run: the report says which orders are lost.
            qCWarning(lcCore).noquote() << "qa" << run.id << error;
            error.clear();
        }
        const QString drained = waitUntil(options.settleTimeoutMs, QStringLiteral("outbox drained"),
                                          [&]() -> Result<bool> {
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
        const QString quiet = waitUntil(options.settleTimeoutMs, QStringLiteral("deliveries quiet"),
                                        [&]() -> Result<bool> {
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
