#pragma once

// ScenarioRunner's state and steps, shared by scenariorunner.cpp (a run from plan to report,
// its thread and lease) and scenariosteps.cpp (what each kind of scenario does).

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

namespace scenario {

// WeChat Pay's re-delivery intervals in seconds (docs/design.md): a retry storm re-sends on
// this schedule × time_scale.
inline constexpr int kWeChatScheduleS[] = {15,   15,   30,    180,   600,   1200,  1800, 1800,
                                           1800, 3600, 10800, 10800, 10800, 21600, 21600};
inline const QString kChannel = QStringLiteral("wechat");
// Each order is one unit of the scenario's SKU, paid 0.01 … the amount varies per order
// so a mix-up between orders would show as an amount mismatch.
inline constexpr int kRewardPoints = 10;
inline const QString kCouponTemplate = QStringLiteral("QA");

/// Thrown on the run's thread to unwind it when the run must end.
struct StopRequested {};

// No delivery for this long after the last send: the simulator's copies have all arrived.
inline constexpr std::chrono::milliseconds kQuietPeriod{1500};

inline QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

inline QString describe(const DriverAnswer &answer)
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

} // namespace scenario

struct ScenarioRunner::Private {
    using Group = scenario::Group;
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
            throw scenario::StopRequested();
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
            throw scenario::StopRequested();
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
        const QString text = QString::fromUtf8(scenario::compact(progress));
        if (auto saved = store.saveProgress(run.id, text); !saved)
            qCWarning(lcCore).noquote() << "qa" << run.id << "progress not stored:" << saved.error().internalMessage;
        if (options.publish)
            options.publish(StreamEvent{QStringLiteral("scenario.progress"), run.id, text, run.actor, run.reason});
    }

    DriverAnswer agentCall(const Run &run, int index, const QByteArray &method, const QString &path,
                           const QJsonObject &body, ScenarioDriver::Headers headers)
    {
        const QString &target = run.params.targets.at(index % run.params.targets.size());
        return driver.agent(target, method, path, body.isEmpty() ? QByteArray() : scenario::compact(body), headers);
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
                                               {QStringLiteral("channel"), scenario::kChannel}},
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
                return {{}, {}, {}, QStringLiteral("confirm %1: %2").arg(orderNo, scenario::describe(answer))};
            if (!pause(std::chrono::milliseconds(std::min(2000, 100 * attempt))))
                return {{}, {}, {}, QStringLiteral("stopping")};
        }
    }

    QString simPay(Run &run, const QString &paymentNo)
    {
        const DriverAnswer paid = driver.sim("POST", QStringLiteral("/sim/pay"),
                                             scenario::compact({{QStringLiteral("channel"), scenario::kChannel},
                                                                {QStringLiteral("out_trade_no"), paymentNo}}));
        if (paid.status != 200)
            return QStringLiteral("sim pay %1: %2").arg(paymentNo, scenario::describe(paid));
        ++run.paidAtSim;
        return {};
    }

    QString simControl(const QString &path, const QJsonObject &body)
    {
        const DriverAnswer answer = driver.sim("POST", path, scenario::compact(body));
        return answer.status == 200 ? QString() : QStringLiteral("sim %1: %2").arg(path, scenario::describe(answer));
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

    // scenariosteps.cpp: what each kind of scenario does to its group of orders.
    QString createOrders(Run &run, QList<Group> &groups);
    QString runBurst(Run &run, Group &group);
    QString runStorm(Run &run, Group &group);
    QString runQueueRedelivery(Run &run, Group &group);
    QString runGatewayReplay(Run &run, Group &group);
    template <typename Predicate>
    QString waitUntil(qint64 timeoutMs, const QString &what, Predicate done);
    // scenariorunner.cpp: the run from plan to report, its end, its thread and its lease.
    void execute(Run &run);
    QList<scenario::Group> planGroups(const Run &run) const;
    QString runGroup(Run &run, scenario::Group &group);
    void waitForSettling(Run &run, const QString &prefix);
    void finish(Run &run, const QString &status, const QString &report);
    void runThread(std::unique_ptr<Run> run);
    void keepLeases();
    void renewLease();
    void writeDownAbandoned();
};

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
        sleepFor(std::chrono::milliseconds(100));
    }
}

} // namespace payonce::core
