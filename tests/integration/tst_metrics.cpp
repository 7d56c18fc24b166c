// GET /metrics on the real agent (with payonce-sim beside it), on each dialect: the
// per-layer duplicate counters move by exactly what the confirm path and a storm of
// duplicate notifications decided; the scrape, taken while requests are in flight, is
// accepted by `promtool check metrics`; the alerting rules by `promtool check rules`.

#include "agentfixture.h"
#include "storagefixture.h"

#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <atomic>
#include <map>
#include <thread>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

using Samples = std::map<QString, double>;

QString layerKey(const char *layer)
{
    return QStringLiteral("payonce_duplicates_total{layer=\"%1\"}").arg(QLatin1String(layer));
}

const char *const kLayers[] = {"none",         "idempotency_key", "token",       "lock",
                               "unique_index", "state_machine",   "side_effect", "rejected"};

/// Runs promtool with `arguments`, `input` on stdin: exit code and everything it printed.
QPair<int, QByteArray> promtool(const QStringList &arguments, const QByteArray &input = {})
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral("promtool"), arguments);
    if (!process.waitForStarted(30000))
        return {-1, "promtool did not start (package prometheus): " + process.errorString().toUtf8()};
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(60000))
        return {-1, "promtool did not finish"};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAll()};
}

} // namespace

class TestMetrics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    // No token needed, the exposition content type, every family docs/openapi.yaml names.
    void scrapeNeedsNoTokenAndListsTheContract()
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/metrics"));
        QCOMPARE(answer.status, 200);
        QVERIFY2(answer.header("Content-Type").startsWith("text/plain; version=0.0.4"), answer.header("Content-Type"));
        const char *const families[] = {"payonce_duplicates_total counter",
                                        "payonce_requests_total counter",
                                        "payonce_request_duration_seconds histogram",
                                        "payonce_breaker_state gauge",
                                        "payonce_outbox_pending gauge",
                                        "payonce_outbox_dead_total counter",
                                        "payonce_compensations gauge",
                                        "payonce_stale_fence_refused_total counter",
                                        "payonce_callback_unfenced_settlements_total counter",
                                        "payonce_callback_grouped_delivery_rows_total counter",
                                        "payonce_callback_grouped_delivery_commits_total counter",
                                        "payonce_callback_grouped_delivery_refused_total counter",
                                        "payonce_callback_one_commit_total counter",
                                        "payonce_callback_verified_copies_reused_total counter",
                                        "payonce_callback_answered_from_memory_total counter",
                                        "payonce_retention_pruned_total counter",
                                        "payonce_redis_degraded gauge",
                                        "payonce_breaker_forced gauge",
                                        "payonce_redis_topology gauge",
                                        "payonce_redis_fence_epoch gauge",
                                        "payonce_redis_master_switches_total counter",
                                        "payonce_findings_open gauge",
                                        "payonce_auth_failures_total counter",
                                        "payonce_auth_refused_total counter",
                                        "payonce_outbox_oldest_pending_seconds gauge",
                                        "payonce_callbacks_accepted gauge",
                                        "payonce_callbacks_accepted_oldest_seconds gauge"};
        for (const char *family : families)
            QVERIFY2(answer.body.contains(QByteArray(QByteArray("# TYPE ") + family + '\n')), family);
        const Samples s = parseMetricSamples(answer.body);
        for (const char *layer : kLayers)
            QVERIFY2(s.count(layerKey(layer)), layer);
        QCOMPARE(s.at(QStringLiteral("payonce_breaker_state{name=\"gateway.wechat\"}")), 0.0);
        QCOMPARE(s.at(QStringLiteral("payonce_redis_degraded")), 0.0);
        // This agent runs the embedded store: its epoch came from the database at start.
        QCOMPARE(s.at(QStringLiteral("payonce_redis_topology{mode=\"embedded\",master=\"\"}")), 1.0);
        QVERIFY(s.at(QStringLiteral("payonce_redis_fence_epoch")) >= 1.0);
        QCOMPARE(s.at(QStringLiteral("payonce_redis_master_switches_total")), 0.0);
        QCOMPARE(s.at(QStringLiteral("payonce_outbox_dead_total")), 0.0);
        QCOMPARE(s.at(QStringLiteral("payonce_findings_open{kind=\"stuck_paying\"}")), 0.0);
    }

    // A confirm, its replay (L1) and a fresh key with the used token (L2): one each.
    void confirmLayersAreCounted()
    {
        QString error;
        const QString orderNo = QStringLiteral("ORD-MET-CONFIRM");
        QVERIFY2(m_agent->createOrder(orderNo, 42, QStringLiteral("10.00"), QStringLiteral("SKU-MET-C"), &error),
                 qPrintable(error));
        const Samples before = scrape();
        const QString token = m_agent->issueToken(42, orderNo);
        QVERIFY(!token.isEmpty());
        const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                                          {QStringLiteral("order_no"), orderNo},
                                                          {QStringLiteral("channel"), QStringLiteral("wechat")}})
                                    .toJson(QJsonDocument::Compact);
        const auto confirm = [&](const QByteArray &key) {
            return m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"), body,
                                 {{"X-User-Id", "42"}, {"Idempotency-Key", key}});
        };
        const HttpAnswer first = confirm("met-key-1");
        QVERIFY2(first.status == 200 && first.header("X-Payonce-Layer") == "none", first.body.constData());
        const HttpAnswer replay = confirm("met-key-1");
        QVERIFY2(replay.header("X-Payonce-Layer") == "idempotency_key", replay.body.constData());
        const HttpAnswer reused = confirm("met-key-2");
        QVERIFY2(reused.header("X-Payonce-Layer") == "token", reused.body.constData());

        const Samples after = scrape();
        Samples expected;
        expected[layerKey("none")] = 1;
        expected[layerKey("idempotency_key")] = 1;
        expected[layerKey("token")] = 1;
        for (const char *layer : kLayers)
            QCOMPARE(after.at(layerKey(layer)) - before.at(layerKey(layer)), expected[layerKey(layer)]);
        const QString confirmOk = QStringLiteral(
            "payonce_requests_total{endpoint=\"/api/v1/payments/confirm\",outcome=\"2xx\"}");
        QVERIFY(after.at(confirmOk) - before.at(confirmOk) >= 2);
        const QString confirmCount = QStringLiteral(
            "payonce_request_duration_seconds_count{endpoint=\"/api/v1/payments/confirm\"}");
        QCOMPARE(after.at(confirmCount) - before.at(confirmCount), 3.0);
    }

    // Every delivery of a payment arrives as 5 simultaneous copies: the counters move by
    // exactly the layers recorded for the order's deliveries — one `none`, the rest
    // caught by a named layer.
    void duplicateNotificationStormMovesTheLayerCounters()
    {
        QString error;
        const QString orderNo = QStringLiteral("ORD-MET-STORM");
        const QString paymentNo = m_agent->confirmedOrder(
            orderNo, 42, QStringLiteral("99.00"), QStringLiteral("SKU-MET-S"), QStringLiteral("wechat"), &error);
        QVERIFY2(!paymentNo.isEmpty(), qPrintable(error));
        const Samples before = scrape();

        QVERIFY2(m_agent->simPayWithCopies(QStringLiteral("wechat"), paymentNo, 5, 30000, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?", {orderNo}) >= 5, 30000);
        const qint64 deliveries = m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?",
                                                {orderNo});
        // The counter moves when a delivery's answer is decided, just after its row is written.
        QTRY_COMPARE_WITH_TIMEOUT(callbackDecisions(before), double(deliveries), 30000);

        const Samples after = scrape();
        QCOMPARE(after.at(layerKey("none")) - before.at(layerKey("none")), 1.0);
        for (const char *layer : kLayers) {
            if (qstrcmp(layer, "side_effect") == 0)
                continue; // not a delivery's answer: an effect's own key, counted besides
            const qint64 recorded = countRows(
                m_agent.database(),
                QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND layer = ?"),
                {QVariant(orderNo), QVariant(QString::fromLatin1(layer))});
            QVERIFY2(after.at(layerKey(layer)) - before.at(layerKey(layer)) == double(recorded),
                     qPrintable(QStringLiteral("%1: metric moved by %2, %3 deliveries recorded")
                                    .arg(QLatin1String(layer))
                                    .arg(after.at(layerKey(layer)) - before.at(layerKey(layer)))
                                    .arg(recorded)));
        }
        QCOMPARE(after.at(layerKey("side_effect")), before.at(layerKey("side_effect")));
        QVERIFY(deliveries - 1 >= 4);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}),
                 qint64(1));
        const QString callbacksOk = QStringLiteral(
            "payonce_requests_total{endpoint=\"/api/v1/callbacks/wechat\",outcome=\"2xx\"}");
        QVERIFY(after.at(callbacksOk) - before.at(callbacksOk) >= 1);
    }

    // A byte-identical copy of a processed notification (the simulator's redelivery) is
    // answered on the event loop from memory: SUCCESS at the unique index, its own row,
    // and the memory counter and the reuse counter both moved by it. On Alipay's route
    // too, where the refund interceptor comes after the memory-first try.
    void aCopyOfAProcessedNotificationIsAnsweredFromMemory_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::newRow("wechat") << QStringLiteral("wechat");
        QTest::newRow("alipay") << QStringLiteral("alipay");
    }
    void aCopyOfAProcessedNotificationIsAnsweredFromMemory()
    {
        QFETCH(QString, channel);
        QString error;
        const QString orderNo = QStringLiteral("ORD-MET-MEMORY-") + channel;
        const QString paymentNo = m_agent->confirmedOrder(orderNo, 42, QStringLiteral("7.00"),
                                                          QStringLiteral("SKU-MET-M-") + channel, channel, &error);
        QVERIFY2(!paymentNo.isEmpty(), qPrintable(error));
        QVERIFY2(m_agent->simPayWithCopies(channel, paymentNo, 1, 30000, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}), qint64(1),
            30000);
        const qint64 deliveriesBefore = m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?",
                                                      {orderNo});
        const Samples before = scrape();

        const HttpAnswer redelivered = m_agent->simCall(
            "POST", QStringLiteral("/sim/notifications/%1/redeliver").arg(paymentNo));
        QVERIFY2(redelivered.status == 200, qPrintable(describe(redelivered)));
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?", {orderNo}),
            deliveriesBefore + 1, 30000);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND layer = "
                               "'unique_index' AND http_status = 200 AND error_code = 'seen_processed'",
                               {orderNo}),
                 qint64(1));
        const QString fromMemory = QStringLiteral("payonce_callback_answered_from_memory_total");
        const QString reused = QStringLiteral("payonce_callback_verified_copies_reused_total");
        QTRY_COMPARE_WITH_TIMEOUT(scrape().at(fromMemory) - before.at(fromMemory), 1.0, 30000);
        const Samples after = scrape();
        QCOMPARE(after.at(reused) - before.at(reused), 1.0);
        QCOMPARE(after.at(layerKey("unique_index")) - before.at(layerKey("unique_index")), 1.0);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM stock_log WHERE order_no = ?", {orderNo}), qint64(1));
    }

    // The backlog accept-only mode leaves and its age, as the database has them: a paid
    // notification acknowledged in accept-only mode is counted with how long it has waited;
    // back to normal, the worker drains it and both return to 0.
    void acceptedCallbacksAndTheirAgeAreGauges()
    {
        QString error;
        const QString orderNo = QStringLiteral("ORD-MET-ACCEPTED");
        const QString paymentNo = m_agent->confirmedOrder(
            orderNo, 42, QStringLiteral("5.00"), QStringLiteral("SKU-MET-A"), QStringLiteral("wechat"), &error);
        QVERIFY2(!paymentNo.isEmpty(), qPrintable(error));
        const auto setMode = [&](const char *mode) {
            const HttpAnswer set = m_agent.setCallbackMode(QLatin1String(mode), QStringLiteral("metrics test"));
            QVERIFY2(set.status == 200, set.body.constData());
        };
        setMode("accept_only");
        QCOMPARE(m_agent->simPay(QStringLiteral("wechat"), paymentNo).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'accepted'",
                          {orderNo}),
            qint64(1), 30000);
        QTest::qWait(1100); // the row waits a second
        const qint64 accepted = countRows(
            m_agent.database(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'accepted'"));
        const Samples waiting = scrape();
        QCOMPARE(waiting.at(QStringLiteral("payonce_callbacks_accepted")), double(accepted));
        QVERIFY2(waiting.at(QStringLiteral("payonce_callbacks_accepted_oldest_seconds")) >= 1.0,
                 qPrintable(QString::number(waiting.at(QStringLiteral("payonce_callbacks_accepted_oldest_seconds")))));
        QVERIFY(waiting.count(QStringLiteral("payonce_outbox_oldest_pending_seconds")));

        setMode("normal");
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}), qint64(1),
            30000);
        QTRY_COMPARE_WITH_TIMEOUT(scrape().at(QStringLiteral("payonce_callbacks_accepted")), 0.0, 30000);
        QCOMPARE(scrape().at(QStringLiteral("payonce_callbacks_accepted_oldest_seconds")), 0.0);
    }

    // Scrapes taken while a load runs on another thread: each passes promtool's checks,
    // and its histograms stay consistent (the +Inf bucket equals _count).
    // Failed authentications by reason, and the limiter's 429 refusals apart: each moves
    // by exactly the requests sent. Two addresses of their own (the limiter counts per
    // address, 10 failures a minute).
    void failedAuthenticationsAreCounted()
    {
        const QString missing = QStringLiteral("payonce_auth_failures_total{reason=\"missing_token\"}");
        const QString unknown = QStringLiteral("payonce_auth_failures_total{reason=\"unknown_token\"}");
        const QString refused = QStringLiteral("payonce_auth_refused_total");
        const QString path = QStringLiteral("/api/v1/outbox");
        const QString first = QStringLiteral("127.0.0.31");
        const QString second = QStringLiteral("127.0.0.32");
        const int port = m_agent->port();
        const Samples before = scrape();

        // Under the limit: 3 without a token, 4 with one nobody configured.
        for (int i = 0; i < 3; ++i)
            QCOMPARE(statusFrom(first, port, "GET", path, {}, {}), 401);
        for (int i = 0; i < 4; ++i)
            QCOMPARE(statusFrom(first, port, "GET", path, {}, "no-such-token"), 401);
        QCOMPARE(statusFrom(first, port, "GET", path, {}, kViewToken), 200);
        // Up to the limit, then wrong tokens are refused while the window lasts; a valid
        // token is still answered, and a missing one is a 401 (it guessed nothing).
        for (int i = 0; i < 10; ++i)
            QCOMPARE(statusFrom(second, port, "GET", path, {}, "no-such-token"), 401);
        QCOMPARE(statusFrom(second, port, "GET", path, {}, "no-such-token"), 429);
        QCOMPARE(statusFrom(second, port, "GET", path, {}, kViewToken), 200);
        QCOMPARE(statusFrom(second, port, "GET", path, {}, {}), 401);
        QCOMPARE(statusFrom(second, port, "GET", path, {}, "no-such-token"), 429);

        const Samples after = scrape();
        QCOMPARE(after.at(missing) - before.at(missing), 4.0);
        QCOMPARE(after.at(unknown) - before.at(unknown), 16.0); // the refused ones named no token either
        QCOMPARE(after.at(refused) - before.at(refused), 2.0);
    }

    void promtoolAcceptsScrapesUnderLoad()
    {
        std::atomic<bool> stop{false};
        std::atomic<int> sent{0};
        const int port = m_agent->port();
        std::thread load([&] {
            const QString paths[] = {QStringLiteral("/healthz"), QStringLiteral("/readyz"),
                                     QStringLiteral("/api/v1/orders/NOPE"), QStringLiteral("/no/such/path")};
            for (int i = 0; !stop.load(); ++i) {
                httpCall(port, "GET", paths[i % 4], {}, {});
                sent.fetch_add(1);
            }
        });
        QByteArray lastScrape;
        for (int i = 0; i < 6; ++i) {
            const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/metrics"));
            QCOMPARE(answer.status, 200);
            const auto [code, output] = promtool({QStringLiteral("check"), QStringLiteral("metrics")}, answer.body);
            QVERIFY2(code == 0, QByteArray(output + "\n--- scrape ---\n" + answer.body).constData());
            const Samples s = parseMetricSamples(answer.body);
            for (const auto &[key, value] : s) {
                if (!key.startsWith(u"payonce_request_duration_seconds_count"))
                    continue;
                QString inf = key;
                inf.replace(QStringLiteral("_count{"), QStringLiteral("_bucket{"));
                inf.replace(QStringLiteral("\"}"), QStringLiteral("\",le=\"+Inf\"}"));
                QVERIFY2(s.count(inf) && s.at(inf) == value, qPrintable(key));
            }
            lastScrape = answer.body;
        }
        stop = true;
        load.join();
        QVERIFY(sent.load() > 0);
        const Samples s = parseMetricSamples(m_agent->call("GET", QStringLiteral("/metrics")).body);
        QVERIFY(s.at(QStringLiteral("payonce_requests_total{endpoint=\"unmatched\",outcome=\"4xx\"}")) >= 1);
        QVERIFY(s.at(QStringLiteral("payonce_requests_total{endpoint=\"/healthz\",outcome=\"2xx\"}")) >= 1);
        QVERIFY(s.at(QStringLiteral("payonce_requests_total{endpoint=\"/api/v1/orders/<order_no>\",outcome=\"4xx\"}"))
                >= 1);
    }

    void promtoolAcceptsTheAlertingRules()
    {
        const QString rules = QStringLiteral(PAYONCE_SOURCE_DIR)
                              + QStringLiteral("/resources/prometheus/payonce-alerts.yml");
        const auto [code, output] = promtool({QStringLiteral("check"), QStringLiteral("rules"), rules});
        QVERIFY2(code == 0, output.constData());
        QVERIFY2(output.contains("SUCCESS"), output.constData());
    }

private:
    Samples scrape() { return m_agent->scrapeMetrics(); }

    /// How many callback answers were decided since `before` (every layer but side_effect).
    double callbackDecisions(const Samples &before)
    {
        const Samples now = scrape();
        double sum = 0;
        for (const char *layer : kLayers) {
            if (qstrcmp(layer, "side_effect") != 0 && now.count(layerKey(layer)))
                sum += now.at(layerKey(layer)) - before.at(layerKey(layer));
        }
        return sum;
    }

    AgentFixture m_agent;
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
