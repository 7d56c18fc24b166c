// QA scenarios end to end, on each dialect: the agent binary with qa.enabled and
// payonce-sim beside it. A concurrent burst and a retry storm run through the agent's own
// HTTP API and the simulator, and the invariant report — computed by SQL — passes with
// every invariant; the counts are checked again here by independent SQL. Then one extra
// points row injected by raw SQL turns the same report to failed with double_effects 1.
// Bad requests are 400 naming the field with nothing written, a target that is neither
// the agent nor one of its qa.peers too; without qa.enabled the routes do not exist.

#include "agentconfig.h"
#include "agentfixture.h"
#include "storagefixture.h"
#include "webhookreceiver.h"

#include "shared/streammessage.h"
#include "sql/sqlqarunstore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkRequest>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

/// The scenario.progress events of the live stream, as a console would see them.
class ProgressListener : public QObject {
public:
    QList<StreamEvent> progress;

    explicit ProgressListener(int port)
    {
        connect(&m_socket, &QWebSocket::textMessageReceived, this, [this](const QString &text) {
            const auto message = decodeStreamMessage(text.toUtf8());
            const auto *event = message ? std::get_if<StreamEvent>(&message->body) : nullptr;
            if (event && event->kind == u"scenario.progress")
                progress.append(*event);
        });
        QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/stream").arg(port)));
        request.setRawHeader("Authorization", "Bearer view-token");
        m_socket.open(request);
    }
    bool connected() const { return m_socket.state() == QAbstractSocket::ConnectedState; }
    QStringList phasesOf(const QString &scenarioId) const
    {
        QStringList phases;
        for (const StreamEvent &event : progress) {
            if (event.subject == scenarioId)
                phases
                    << QJsonDocument::fromJson(event.value.toUtf8()).object().value(QStringLiteral("phase")).toString();
        }
        return phases;
    }

private:
    QWebSocket m_socket;
};

} // namespace

class TestQaScenarios : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{qaEnabled()};
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void badRequestsWriteNothing_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("field");
        QTest::newRow("not json") << QByteArray("{") << QStringLiteral("JSON");
        QTest::newRow("no kind") << QByteArray(R"({"orders":5})") << QStringLiteral("kind");
        QTest::newRow("unknown kind") << QByteArray(R"({"kind":"storm"})") << QStringLiteral("kind");
        QTest::newRow("orders 0") << QByteArray(R"({"kind":"mixed","orders":0})") << QStringLiteral("orders");
        QTest::newRow("orders over the limit")
            << QByteArray(R"({"kind":"mixed","orders":10001})") << QStringLiteral("orders");
        QTest::newRow("orders fractional")
            << QByteArray(R"({"kind":"mixed","orders":2.5})") << QStringLiteral("orders");
        QTest::newRow("orders string") << QByteArray(R"({"kind":"mixed","orders":"5"})") << QStringLiteral("orders");
        QTest::newRow("duplicates 0") << QByteArray(R"({"kind":"mixed","duplicates":0})")
                                      << QStringLiteral("duplicates");
        QTest::newRow("duplicates 101") << QByteArray(R"({"kind":"mixed","duplicates":101})")
                                        << QStringLiteral("duplicates");
        QTest::newRow("concurrency 65") << QByteArray(R"({"kind":"mixed","concurrency":65})")
                                        << QStringLiteral("concurrency");
        QTest::newRow("time_scale 0") << QByteArray(R"({"kind":"mixed","time_scale":0})")
                                      << QStringLiteral("time_scale");
        QTest::newRow("time_scale text") << QByteArray(R"({"kind":"mixed","time_scale":"fast"})")
                                         << QStringLiteral("time_scale");
        QTest::newRow("targets not a list")
            << QByteArray("{\"kind\":\"mixed\",\"targets\":\"http://127.0.0.1:1\"}") << QStringLiteral("targets");
        QTest::newRow("target https") << QByteArray("{\"kind\":\"mixed\",\"targets\":[\"https://127.0.0.1:1\"]}")
                                      << QStringLiteral("targets");
        QTest::newRow("target with a path")
            << QByteArray("{\"kind\":\"mixed\",\"targets\":[\"http://127.0.0.1:1/api\"]}") << QStringLiteral("targets");
        QTest::newRow("unknown layer") << QByteArray(R"({"kind":"mixed","disable_layers":["firewall"]})")
                                       << QStringLiteral("disable_layers");
        QTest::newRow("layer not a string")
            << QByteArray(R"({"kind":"mixed","disable_layers":[1]})") << QStringLiteral("disable_layers");
        QTest::newRow("empty reason") << QByteArray(R"({"kind":"mixed","reason":" "})") << QStringLiteral("reason");
    }
    void badRequestsWriteNothing()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, field);
        const qint64 runsBefore = m_agent.count("SELECT COUNT(*) FROM qa_runs");
        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"), body, kDesk);
        QCOMPARE(answer.status, 400);
        QCOMPARE(answer.errorCode(), QStringLiteral("invalid_request"));
        const QString message =
            answer.json().value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
        QVERIFY2(message.contains(field), qPrintable(message));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM qa_runs"), runsBefore);
    }

    // A scenario drives its targets' API with a token and storms them with duplicates: it
    // only targets this agent and the peers its config names, never a URL a caller picks.
    void refusesTargetsNotItselfNorAPeer_data()
    {
        QTest::addColumn<QString>("target");
        QTest::newRow("another loopback port") << QStringLiteral("http://127.0.0.1:%1").arg(freeLoopbackPort());
        QTest::newRow("an address off this machine") << QStringLiteral("http://192.0.2.7:8080");
        QTest::newRow("a name") << QStringLiteral("http://payments.example.com");
    }
    void refusesTargetsNotItselfNorAPeer()
    {
        QFETCH(QString, target);
        const qint64 runsBefore = m_agent.count("SELECT COUNT(*) FROM qa_runs");
        const qint64 auditBefore = m_agent.count("SELECT COUNT(*) FROM audit_log");
        const QJsonObject body{{QStringLiteral("kind"), QStringLiteral("mixed")},
                               {QStringLiteral("orders"), 1},
                               {QStringLiteral("targets"),
                                QJsonArray{QStringLiteral("http://127.0.0.1:%1").arg(m_agent->port()), target}}};
        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"),
                                                QJsonDocument(body).toJson(QJsonDocument::Compact), kDesk);
        QCOMPARE(answer.status, 400);
        QCOMPARE(answer.errorCode(), QStringLiteral("qa_target_not_allowed"));
        const QString message =
            answer.json().value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
        QVERIFY2(message.contains(target) && message.contains(u"qa.peers"), qPrintable(message));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM qa_runs"), runsBefore);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM audit_log"), auditBefore);
    }

    // The caller's bearer token never leaves the agent: the set-up calls to a target carry
    // the agent's own QA token (qa.token), so a peer — or whatever listens at its address —
    // never learns an operator's credential. The target here is a recorder listed as a peer.
    void neverForwardsTheCallersToken()
    {
        WebhookReceiver recorder(500); // refuses the set-up: the run ends with error
        const QString recorderUrl = QStringLiteral("http://127.0.0.1:%1").arg(recorder.url(QStringLiteral("/")).port());
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            {QStringLiteral("qa"),
             QJsonObject{{QStringLiteral("enabled"), true}, {QStringLiteral("peers"), QJsonArray{recorderUrl}}}}};
        // An agent of its own on SQLite: this one's configuration is the test's subject.
        AgentFixture agent;
        QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
        const QJsonObject body{{QStringLiteral("kind"), QStringLiteral("concurrent_burst")},
                               {QStringLiteral("orders"), 2},
                               {QStringLiteral("targets"), QJsonArray{recorderUrl}}};
        const HttpAnswer started = agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"),
                                               QJsonDocument(body).toJson(QJsonDocument::Compact), kDesk);
        QVERIFY2(started.status == 202, started.body.constData());
        const QString id = started.json().value(QStringLiteral("scenario_id")).toString();
        QJsonObject run;
        QTRY_VERIFY_WITH_TIMEOUT(
            (run = agent->call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView).json())
                    .value(QStringLiteral("status"))
                    .toString()
                != u"running",
            60000);
        QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
        const QList<WebhookReceiver::Request> received = recorder.requests();
        QVERIFY2(!received.isEmpty(), "the run sent nothing to its target");
        for (const WebhookReceiver::Request &request : received) {
            const QByteArray authorization = request.headers.value("authorization");
            QVERIFY2(!authorization.contains(kDeskToken),
                     QByteArray(request.method + ' ' + request.path + ": " + authorization).constData());
            QCOMPARE(authorization, QByteArray("Bearer qa-token"));
        }
        // Who started it is still the caller.
        QCOMPARE(run.value(QStringLiteral("started_by")).toString(), QStringLiteral("desk"));
        agent.stop();
    }

    void rolesAreChecked()
    {
        const QByteArray body = R"({"kind":"mixed","orders":1})";
        QCOMPARE(m_agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"), body).status, 401);
        QCOMPARE(m_agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"), body, kView).status, 403);
        QCOMPARE(m_agent->call("GET", QStringLiteral("/api/v1/qa/scenarios")).status, 401);
        QCOMPARE(m_agent->call("GET", QStringLiteral("/api/v1/qa/scenarios"), {}, kView).status, 200);
        const HttpAnswer unknown = m_agent->call("GET", QStringLiteral("/api/v1/qa/scenarios/qa-00000000"), {}, kView);
        QCOMPARE(unknown.status, 404);
        QCOMPARE(unknown.errorCode(), QStringLiteral("scenario_not_found"));
    }

    void concurrentBurstPassesEveryInvariant()
    {
        ProgressListener listener(m_agent->port());
        QTRY_VERIFY_WITH_TIMEOUT(listener.connected(), 10000);
        QString id;
        QJsonObject run;
        runToPassed(R"({"kind":"concurrent_burst","orders":24,"duplicates":5,"concurrency":8,)"
                    R"("reason":"burst on every dialect"})",
                    24, &id, &run);
        if (QTest::currentTestFailed())
            return;
        const QJsonObject report = run.value(QStringLiteral("report")).toObject();
        // Every notification arrived as 5 simultaneous copies: at least 5 per order, and
        // all but the one that paid were caught by a layer.
        QVERIFY2(report.value(QStringLiteral("deliveries")).toInteger() >= 24 * 5,
                 QJsonDocument(report).toJson().constData());
        qint64 caught = 0;
        const QJsonObject byLayer = report.value(QStringLiteral("by_layer")).toObject();
        for (auto it = byLayer.begin(); it != byLayer.end(); ++it) {
            if (it.key() != u"none")
                caught += it.value().toInteger();
        }
        QVERIFY2(caught >= 24 * 4, QJsonDocument(report).toJson().constData());
        // The stream told the story: set-up, the burst, settling, passed.
        QTRY_VERIFY_WITH_TIMEOUT(listener.phasesOf(id).contains(QStringLiteral("passed")), 10000);
        QCOMPARE(listener.phasesOf(id).first(), QStringLiteral("setup"));
        QVERIFY(listener.phasesOf(id).contains(QStringLiteral("concurrent_burst")));
        for (const StreamEvent &event : std::as_const(listener.progress)) {
            QCOMPARE(event.actor, QStringLiteral("desk"));
            QCOMPARE(event.reason, QStringLiteral("burst on every dialect"));
        }
        // Audited with actor and reason; listed.
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM audit_log WHERE action = 'qa.scenario.start' AND actor = 'desk' "
                               "AND target = ? AND reason = 'burst on every dialect'",
                               {QString(QStringLiteral("scenario:") + id)}),
                 qint64(1));
        const QJsonArray listed = QJsonDocument::fromJson(
                                      m_agent->call("GET", QStringLiteral("/api/v1/qa/scenarios"), {}, kView).body)
                                      .array();
        QVERIFY(!listed.isEmpty());
        QCOMPARE(listed.first().toObject().value(QStringLiteral("scenario_id")).toString(), id);
        m_burstId = id;
    }

    void retryStormPassesEveryInvariant()
    {
        QString id;
        QJsonObject run;
        runToPassed(R"({"kind":"retry_storm","orders":12,"duplicates":4,"concurrency":6,)"
                    R"("time_scale":0.001})",
                    12, &id, &run);
        if (QTest::currentTestFailed())
            return;
        const QJsonObject report = run.value(QStringLiteral("report")).toObject();
        // The first delivery and 4 re-sends of each notification reached the agent.
        QCOMPARE(run.value(QStringLiteral("progress")).toObject().value(QStringLiteral("redeliveries")).toInteger(),
                 12 * 4);
        QVERIFY2(report.value(QStringLiteral("deliveries")).toInteger() >= 12 * 5,
                 QJsonDocument(report).toJson().constData());
    }

    void injectedExtraEffectFailsTheReport()
    {
        QVERIFY(!m_burstId.isEmpty());
        const QString prefix = m_burstId + QLatin1Char('-');
        sql::SqlQaRunStore store(m_agent.database());
        auto before = store.report(prefix);
        QVERIFY2(before.ok(), qPrintable(before.ok() ? QString() : before.error().internalMessage));
        QVERIFY(before.value().passed());
        const QString orderNo = firstValueText(m_agent.database(),
                                               QStringLiteral("SELECT MIN(order_no) FROM orders WHERE order_no LIKE ?"),
                                               {QVariant(prefix + QStringLiteral("%"))});
        QVERIFY(orderNo.startsWith(prefix));
        // A second points grant for one order, as a bug without the side-effect key would write.
        auto injected = execSql(m_agent.database(),
                                QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, "
                                               "created_at) SELECT order_no, user_id, 'injected', 10, 0, 0 FROM orders "
                                               "WHERE order_no = ?"),
                                {QVariant(orderNo)});
        QVERIFY2(injected.ok(), qPrintable(injected.ok() ? QString() : injected.error().internalMessage));
        auto after = store.report(prefix);
        QVERIFY(after.ok());
        QCOMPARE(after.value().doubleEffects, qint64(1));
        QCOMPARE(after.value().missingEffects, qint64(0));
        QCOMPARE(after.value().paidOnce, qint64(24));
        QVERIFY(!after.value().passed());
        QCOMPARE(after.value().toJson().value(QStringLiteral("passed")).toBool(), false);
    }

    // disable_layers reach the callback path through qa_runs, for that scenario's orders only.
    void lockDisabledStormStillPasses()
    {
        QString id;
        QJsonObject run;
        runToPassed(R"({"kind":"retry_storm","orders":10,"duplicates":3,"concurrency":5,)"
                    R"("disable_layers":["lock"]})",
                    10, &id, &run);
        if (QTest::currentTestFailed())
            return;
        const QJsonObject report = run.value(QStringLiteral("report")).toObject();
        const QJsonObject byLayer = report.value(QStringLiteral("by_layer")).toObject();
        // What the lock would have caught, the unique index (log row, seen-processed) did.
        QVERIFY2(byLayer.value(QStringLiteral("unique_index")).toInteger() > 0,
                 QJsonDocument(report).toJson().constData());
        QCOMPARE(byLayer.value(QStringLiteral("lock")).toInteger(), 0);
    }

    void lockAndUniqueIndexDisabledBurstCaughtByTheStateMachine()
    {
        QString id;
        QJsonObject run;
        runToPassed(R"({"kind":"concurrent_burst","orders":12,"duplicates":5,"concurrency":6,)"
                    R"("disable_layers":["lock","unique_index"]})",
                    12, &id, &run, LogRows::Skipped);
        if (QTest::currentTestFailed())
            return;
        const QJsonObject report = run.value(QStringLiteral("report")).toObject();
        const QJsonObject byLayer = report.value(QStringLiteral("by_layer")).toObject();
        QVERIFY2(byLayer.value(QStringLiteral("state_machine")).toInteger() > 0,
                 QJsonDocument(report).toJson().constData());
        QCOMPARE(byLayer.value(QStringLiteral("unique_index")).toInteger(), 0);
        // unique_index off skips the callback-log insert — for this scenario only.
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no LIKE ?",
                               {QString(id + QStringLiteral("-%"))}),
                 qint64(0));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no LIKE ?",
                               {QString(m_burstId + QStringLiteral("-%"))}),
                 qint64(24));
    }

    // The other two kinds, through mixed: a confirm replayed after a gateway timeout and an
    // order.paid event delivered twice.
    void mixedPassesEveryInvariant()
    {
        QString id;
        QJsonObject run;
        runToPassed(R"({"kind":"mixed","orders":16,"duplicates":3,"concurrency":4})", 16, &id, &run);
        if (QTest::currentTestFailed())
            return;
        const QJsonObject progress = run.value(QStringLiteral("progress")).toObject();
        // 4 orders each: the queue delivered their order.paid events a second time …
        QCOMPARE(progress.value(QStringLiteral("outbox_redelivered")).toInteger(), 4);
        // … and the gateway-replay orders saw a 504 from the platform (the confirm failed,
        // 503), the replay of that confirm answered from L1, the successful confirm and its
        // replay from L1 — one payment record each all the same (checked by the report).
        const QJsonObject confirms =
            run.value(QStringLiteral("report")).toObject().value(QStringLiteral("confirm_layers")).toObject();
        qInfo("confirm layers: %s", QJsonDocument(confirms).toJson(QJsonDocument::Compact).constData());
        QCOMPARE(confirms.value(QStringLiteral("none/503")).toInteger(), 4);
        QCOMPARE(confirms.value(QStringLiteral("idempotency_key/503")).toInteger(), 4);
        QCOMPARE(confirms.value(QStringLiteral("idempotency_key")).toInteger(), 4);
        QCOMPARE(confirms.value(QStringLiteral("none")).toInteger(), 16);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM payment_records WHERE order_no LIKE ?",
                               {QString(id + QStringLiteral("-%"))}),
                 qint64(16));
    }

    void routesAbsentWithoutQaEnabled()
    {
        AgentProcess::Options options;
        options.sim = false;
        // An agent of its own on SQLite: this one's configuration is the test's subject.
        AgentFixture agent;
        QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
        const HttpAnswer posted = agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"),
                                              R"({"kind":"mixed","orders":1})", kDesk);
        QCOMPARE(posted.status, 404);
        QCOMPARE(posted.errorCode(), QStringLiteral("not_found"));
        QCOMPARE(agent->call("GET", QStringLiteral("/api/v1/qa/scenarios"), {}, kView).status, 404);
        agent.stop();
    }

private:
    QString startScenario(const QByteArray &body)
    {
        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/qa/scenarios"), body, kDesk);
        if (answer.status != 202) {
            qWarning("POST scenario: %d %s", answer.status, answer.body.constData());
            return {};
        }
        return answer.json().value(QStringLiteral("scenario_id")).toString();
    }

    QJsonObject waitForEnd(const QString &id)
    {
        QJsonObject run;
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < 240000) {
            run = m_agent->call("GET", QStringLiteral("/api/v1/qa/scenarios/") + id, {}, kView).json();
            if (run.value(QStringLiteral("status")).toString() != u"running")
                break;
            QTest::qWait(200);
        }
        if (run.value(QStringLiteral("status")).toString() != u"passed")
            qWarning("%s\n%s", QJsonDocument(run).toJson().constData(), qPrintable(m_agent->output().right(3000)));
        return run;
    }

    /// Whether the scenario writes callback-log rows (its unique_index layer is on).
    enum class LogRows {
        Written,
        Skipped
    };

    /// Starts a scenario, waits for its end and checks it passed with every invariant.
    void runToPassed(const QByteArray &body, int orders, QString *id, QJsonObject *run,
                     LogRows logRows = LogRows::Written)
    {
        *id = startScenario(body);
        QVERIFY(!id->isEmpty());
        *run = waitForEnd(*id);
        QCOMPARE(run->value(QStringLiteral("status")).toString(), QStringLiteral("passed"));
        checkPassedReport(run->value(QStringLiteral("report")).toObject(), *id, orders, logRows);
    }

    /// The report's claims, and the same counts by independent SQL.
    void checkPassedReport(const QJsonObject &report, const QString &id, int orders, LogRows logRows)
    {
        const QString like = QString(id + QStringLiteral("-%"));
        QCOMPARE(report.value(QStringLiteral("orders")).toInteger(), orders);
        QCOMPARE(report.value(QStringLiteral("paid_once")).toInteger(), orders);
        QCOMPARE(report.value(QStringLiteral("double_effects")).toInteger(), 0);
        QCOMPARE(report.value(QStringLiteral("missing_effects")).toInteger(), 0);
        QCOMPARE(report.value(QStringLiteral("lost")).toInteger(), 0);
        QCOMPARE(report.value(QStringLiteral("passed")).toBool(), true);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no LIKE ? AND status = 'PAID'", {like}),
                 qint64(orders));
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM payment_records WHERE order_no LIKE ? AND status = 'paid'", {like}),
            qint64(orders));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM stock_log WHERE order_no LIKE ?", {like}), qint64(orders));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM user_coupon WHERE order_no LIKE ?", {like}), qint64(orders));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM point_log WHERE order_no LIKE ?", {like}), qint64(orders));
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM outbox WHERE aggregate_id LIKE ? AND status = 'delivered'", {like}),
            qint64(orders));
        // The SKU's stock went down by exactly one per order.
        QCOMPARE(firstValueText(m_agent.database(), QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"),
                                {QVariant(id + QStringLiteral("-SKU"))}),
                 QStringLiteral("0"));
        // by_layer is every recorded delivery, exactly one of them processed per order.
        qint64 sum = 0;
        const QJsonObject byLayer = report.value(QStringLiteral("by_layer")).toObject();
        for (auto it = byLayer.begin(); it != byLayer.end(); ++it)
            sum += it.value().toInteger();
        QCOMPARE(sum, report.value(QStringLiteral("deliveries")).toInteger());
        QCOMPARE(sum, m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no LIKE ?", {like}));
        // Each order's log row is processed and names a delivery of its order answered 200
        // (the one that made it durable). At most one delivery per order processed it (layer
        // none, 200) — a none with 500 is a retryable failure the platform re-sends —; an
        // order with none was answered from its durable row while another copy held the lock
        // (lock_busy_durable), and the holder rolled back: the worker finished the row.
        const qint64 backed = m_agent.count(
            "SELECT COUNT(*) FROM pay_callback_log l JOIN callback_deliveries d ON d.id = l.delivery_id "
            "AND d.order_no = l.order_no WHERE l.order_no LIKE ? AND l.status = 'processed' AND d.http_status = 200",
            {like});
        const qint64 processedTwice = m_agent.count(
            "SELECT COUNT(*) FROM (SELECT order_no FROM callback_deliveries WHERE order_no LIKE ? "
            "AND layer = 'none' AND http_status = 200 GROUP BY order_no HAVING COUNT(*) > 1) twice",
            {like});
        const qint64 processedDeliveries = m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no "
                                                         "LIKE ? AND layer = 'none' AND http_status = 200",
                                                         {like});
        // With no log rows there is no durable row to answer from nor for the worker to
        // finish: every order was processed by exactly one of its deliveries.
        const qint64 expectedBacked = logRows == LogRows::Written ? orders : 0;
        const bool allProcessedByADelivery = logRows == LogRows::Skipped;
        if (backed != expectedBacked || processedTwice != 0 || processedDeliveries > orders
            || (allProcessedByADelivery && processedDeliveries != orders))
            qWarning("%s\n%s", qPrintable(deliveriesOf(like)), qPrintable(m_agent->output().right(6000)));
        QCOMPARE(backed, expectedBacked);
        QCOMPARE(processedTwice, qint64(0));
        QVERIFY(processedDeliveries <= orders);
        if (allProcessedByADelivery)
            QCOMPARE(processedDeliveries, qint64(orders));
        if (processedDeliveries < orders)
            qInfo("%lld of %d orders finished from their durable row by the worker", orders - processedDeliveries,
                  orders);
    }

    /// Every delivery and log row of the orders matching `like`, one line each.
    QString deliveriesOf(const QString &like)
    {
        QStringList lines;
        auto read = m_agent.database().read([&](sql::Session &session) -> core::Result<void> {
            const QString sqls[] = {
                QStringLiteral("SELECT order_no, id, layer, http_status, error_code FROM callback_deliveries "
                               "WHERE order_no LIKE ? ORDER BY order_no, id"),
                QStringLiteral("SELECT order_no, status, delivery_id, outcome, processed_at FROM pay_callback_log "
                               "WHERE order_no LIKE ? ORDER BY order_no")};
            for (const QString &sql : sqls) {
                auto query = session.exec(sql, {like});
                if (!query)
                    return query.error();
                while (query.value().next()) {
                    QStringList fields;
                    for (int i = 0; i < 5; ++i)
                        fields << query.value().value(i).toString();
                    lines << fields.join(QLatin1Char(' '));
                }
            }
            return {};
        });
        if (!read)
            lines << read.error().internalMessage;
        return lines.join(QLatin1Char('\n'));
    }

    AgentFixture m_agent;
    QString m_burstId;
};

QTEST_GUILESS_MAIN(TestQaScenarios)
#include "tst_qascenarios.moc"
