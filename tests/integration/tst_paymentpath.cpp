// The payment path over real HTTP: the payonce-agent binary with payonce-sim beside it
// (sim.enabled), on each dialect's database (tst_paymentpath_sqlite / _postgresql /
// _mariadb). What the contract (docs/openapi.yaml, "Paying") promises, seen from outside.

#include "agentfixture.h"
#include "storagefixture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QThread>

#include <atomic>
#include <map>
#include <mutex>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

QByteArray confirmBody(const QString &token, const QString &orderNo, const QString &channel = QStringLiteral("wechat"))
{
    return QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                     {QStringLiteral("order_no"), orderNo},
                                     {QStringLiteral("channel"), channel}})
        .toJson(QJsonDocument::Compact);
}

Headers confirmHeaders(qint64 userId, const QByteArray &key)
{
    Headers headers{{"X-User-Id", QByteArray::number(userId)}};
    if (!key.isNull())
        headers.append({"Idempotency-Key", key});
    return headers;
}

} // namespace

class TestPaymentPath : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    // 100 concurrent confirms for one order mixing one shared key, fresh keys, the valid
    // token and stale ones → one order at the simulator, one payment record, and every
    // other answer one the contract gives, with its layer.
    void hundredConcurrentConfirmsPayOnce()
    {
        const QString orderNo = QStringLiteral("ORD-STORM");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, 10086, QStringLiteral("99.00"), QStringLiteral("SKU-STORM"), &error),
                 qPrintable(error));
        const int createdBefore = simOrdersCreated();
        // Each issue replaces the user's token for the order: the last one is the valid
        // one, the earlier ones are stale — as after a user's double click on "pay".
        QStringList tokens;
        for (int i = 0; i < 5; ++i)
            tokens.append(m_agent->issueToken(10086, orderNo));
        QVERIFY(!tokens.last().isEmpty());

        constexpr int requests = 100;
        std::mutex mutex;
        std::map<QString, int> tally; // "status code@layer"
        QStringList unexpected;
        int created = 0;
        runConcurrently(requests, [&](int i) {
            const QByteArray key = i % 2 == 0 ? QByteArray("storm-shared-key") : "storm-key-" + QByteArray::number(i);
            const QString token = i % 3 == 0 ? tokens.at(i % 4) : tokens.last();
            const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                    confirmBody(token, orderNo), confirmHeaders(10086, key));
            const QByteArray layer = answer.header("X-Payonce-Layer");
            const QString code = answer.errorCode();
            const bool duplicateFlag = answer.json().value(QStringLiteral("duplicate")).toBool();
            // The contract's answers for this storm, each with the layer that gives it.
            bool allowed = false;
            if (answer.status == 200 && code.isEmpty()) {
                const bool replayed = answer.header("Idempotent-Replayed") == "true";
                allowed = (layer == "none" && !duplicateFlag && !replayed) || (layer == "idempotency_key" && replayed)
                          || (layer == "unique_index" && duplicateFlag);
            } else if (answer.status == 409) {
                allowed = (code == u"request_in_progress" && (layer == "idempotency_key" || layer == "lock"))
                          || (code == u"duplicate_request" && layer == "token")
                          || (code == u"order_state_conflict" && layer == "state_machine");
            } else if (answer.status == 422) {
                allowed = code == u"idempotency_key_reused" && layer == "idempotency_key";
            }
            std::lock_guard guard(mutex);
            ++tally[QStringLiteral("%1 %2@%3")
                        .arg(answer.status)
                        .arg(code.isEmpty() ? QStringLiteral("ok") : code, QString::fromLatin1(layer))];
            if (!allowed)
                unexpected.append(describe(answer));
            if (answer.status == 200 && layer == "none")
                ++created;
        });
        for (const auto &[outcome, count] : tally)
            qInfo("%4d × %s", count, qPrintable(outcome));
        QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join(u'\n')));
        QCOMPARE(created, 1);
        QCOMPARE(simOrdersCreated() - createdBefore, 1);
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ?"), {orderNo}),
                 qint64(1));
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAYING' "
                                          "AND version = 1"),
                           {orderNo}),
                 qint64(1));
    }

    // Stripe's semantics, each on its own.
    void replayReturnsTheFirstResponse()
    {
        const QString orderNo = QStringLiteral("ORD-REPLAY");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, 7, QStringLiteral("10.00"), QStringLiteral("SKU-R"), &error),
                 qPrintable(error));
        const QString token = m_agent->issueToken(7, orderNo);
        const HttpAnswer first = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                               confirmBody(token, orderNo), confirmHeaders(7, "replay-key"));
        QVERIFY2(first.status == 200 && first.header("X-Payonce-Layer") == "none", qPrintable(describe(first)));
        const HttpAnswer again = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                               confirmBody(token, orderNo), confirmHeaders(7, "replay-key"));
        QCOMPARE(again.status, first.status);
        QCOMPARE(again.body, first.body);
        QCOMPARE(again.header("Idempotent-Replayed"), QByteArray("true"));
        QCOMPARE(again.header("X-Payonce-Layer"), QByteArray("idempotency_key"));

        // Same key, different body: 422, and nothing new at the platform.
        const int before = simOrdersCreated();
        const HttpAnswer reused = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                confirmBody(token, orderNo, QStringLiteral("alipay")),
                                                confirmHeaders(7, "replay-key"));
        QVERIFY2(reused.status == 422 && reused.errorCode() == u"idempotency_key_reused", qPrintable(describe(reused)));
        QCOMPARE(simOrdersCreated(), before);
    }

    void sameKeyWhileInFlightIs409()
    {
        const QString orderNo = QStringLiteral("ORD-INFLIGHT");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, 8, QStringLiteral("10.00"), QStringLiteral("SKU-F"), &error),
                 qPrintable(error));
        const QString token = m_agent->issueToken(8, orderNo);
        // The platform answers slowly, so the first confirm is still running.
        QCOMPARE(m_agent->simCall("POST", QStringLiteral("/sim/faults"), "{\"channel\":\"wechat\",\"latency_ms\":1500}")
                     .status,
                 200);
        const int requestsBefore = simRequests();
        HttpAnswer first;
        QThread *slow = QThread::create([&] {
            first = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"), confirmBody(token, orderNo),
                                  confirmHeaders(8, "inflight-key"));
        });
        slow->start();
        // Wait until the platform has the first one's create (it answers 1.5 s later): the
        // first confirm is then inside its gateway call, holding its in_flight record.
        QTRY_VERIFY_WITH_TIMEOUT(simRequests() > requestsBefore, 20000);
        const HttpAnswer second = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                confirmBody(token, orderNo), confirmHeaders(8, "inflight-key"));
        slow->wait();
        delete slow;
        QCOMPARE(m_agent->simCall("POST", QStringLiteral("/sim/faults"), "{\"channel\":\"wechat\"}").status, 200);
        QVERIFY2(second.status == 409 && second.errorCode() == u"request_in_progress"
                     && second.header("X-Payonce-Layer") == "idempotency_key"
                     && !second.header("Retry-After").isEmpty(),
                 qPrintable(describe(second)));
        QVERIFY2(first.status == 200, qPrintable(describe(first)));
    }

    void keyProblemsAreRefusedBeforeAnything_data()
    {
        QTest::addColumn<QByteArray>("key");
        QTest::addColumn<QString>("code");
        QTest::newRow("missing") << QByteArray() << QStringLiteral("idempotency_key_missing");
        QTest::newRow("empty") << QByteArray("") << QStringLiteral("idempotency_key_missing");
        QTest::newRow("too long") << QByteArray(256, 'k') << QStringLiteral("invalid_idempotency_key");
        QTest::newRow("not printable") << QByteArray("key\x01") << QStringLiteral("invalid_idempotency_key");
    }
    void keyProblemsAreRefusedBeforeAnything()
    {
        QFETCH(QByteArray, key);
        QFETCH(QString, code);
        const qint64 keys = countRows(m_agent.database(), QStringLiteral("SELECT COUNT(*) FROM idempotency_keys"));
        Headers headers{{"X-User-Id", "9"}};
        if (!key.isNull())
            headers.append({"Idempotency-Key", key});
        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                confirmBody(QStringLiteral("t"), QStringLiteral("ORD-NONE")), headers);
        QVERIFY2(answer.status == 400 && answer.errorCode() == code && answer.header("X-Payonce-Layer") == "rejected",
                 qPrintable(describe(answer)));
        QCOMPARE(countRows(m_agent.database(), QStringLiteral("SELECT COUNT(*) FROM idempotency_keys")), keys);
    }

    void userProblemsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("userId");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        QTest::newRow("missing X-User-Id") << QByteArray() << 400 << QStringLiteral("invalid_user");
        QTest::newRow("non-numeric X-User-Id") << QByteArray("bob") << 400 << QStringLiteral("invalid_user");
        QTest::newRow("negative X-User-Id") << QByteArray("-5") << 400 << QStringLiteral("invalid_user");
        QTest::newRow("another user's order") << QByteArray("99") << 403 << QStringLiteral("order_not_yours");
    }
    void userProblemsAreRefused()
    {
        QFETCH(QByteArray, userId);
        QFETCH(int, status);
        QFETCH(QString, code);
        const QString orderNo = QStringLiteral("ORD-OWNED");
        QString error;
        if (countRows(m_agent.database(), QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ?"), {orderNo})
            == 0)
            QVERIFY2(m_agent->createOrder(orderNo, 5, QStringLiteral("1.00"), QStringLiteral("SKU-O"), &error),
                     qPrintable(error));
        Headers headers;
        if (!userId.isNull())
            headers.append({"X-User-Id", userId});
        const HttpAnswer answer = m_agent->call(
            "POST", QStringLiteral("/api/v1/payments/token"),
            QJsonDocument(QJsonObject{{QStringLiteral("order_no"), orderNo}}).toJson(), headers);
        QVERIFY2(answer.status == status && answer.errorCode() == code, qPrintable(describe(answer)));
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ?"), {orderNo}),
                 qint64(0));
    }

    // Confirm decides who may pay before it spends anything: another user's order is
    // 403 and an unknown one 404 — not "token already used" — and nothing is written.
    void confirmRefusesOtherUsersAndUnknownOrders_data()
    {
        QTest::addColumn<bool>("unknownOrder");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        QTest::newRow("another user's order") << false << 403 << QStringLiteral("order_not_yours");
        QTest::newRow("unknown order") << true << 404 << QStringLiteral("order_not_found");
    }
    void confirmRefusesOtherUsersAndUnknownOrders()
    {
        QFETCH(bool, unknownOrder);
        QFETCH(int, status);
        QFETCH(QString, code);
        // User 5 owns a fresh order and holds its valid token.
        const QString owned = QStringLiteral("ORD-WHO-%1").arg(unknownOrder ? 2 : 1);
        QString error;
        QVERIFY2(m_agent->createOrder(owned, 5, QStringLiteral("1.00"), QStringLiteral("SKU-W"), &error),
                 qPrintable(error));
        const QString token = m_agent->issueToken(5, owned);
        QVERIFY(!token.isEmpty());
        // Someone else presents it for that order — or user 5 for an order that does not exist.
        const QString orderNo = unknownOrder ? QStringLiteral("ORD-NOBODY") : owned;
        const qint64 userId = unknownOrder ? 5 : 99;
        const qint64 keys = countRows(m_agent.database(), QStringLiteral("SELECT COUNT(*) FROM idempotency_keys"));
        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                confirmBody(token, orderNo),
                                                confirmHeaders(userId, "who-" + owned.toUtf8()));
        QVERIFY2(answer.status == status && answer.errorCode() == code
                     && answer.header("X-Payonce-Layer") == "rejected",
                 qPrintable(describe(answer)));
        QCOMPARE(countRows(m_agent.database(), QStringLiteral("SELECT COUNT(*) FROM idempotency_keys")), keys);
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ?"), {owned}),
                 qint64(0));
        // The refused request did not spend the owner's token.
        const HttpAnswer owners = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                confirmBody(token, owned),
                                                confirmHeaders(5, "owner-" + owned.toUtf8()));
        QVERIFY2(owners.status == 200, qPrintable(describe(owners)));
    }

    // The platform failing: confirms fail with 503 and the order returns to PENDING; once
    // it is back, a new token and key reuse the failed record (attempt 2) and the
    // platform has exactly one order for it.
    void gatewayFailureThenRetryReusesTheRecord()
    {
        const QString orderNo = QStringLiteral("ORD-GWFAIL");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, 11, QStringLiteral("5.00"), QStringLiteral("SKU-G"), &error),
                 qPrintable(error));
        QCOMPARE(m_agent
                     ->simCall("POST", QStringLiteral("/sim/faults"),
                               "{\"channel\":\"alipay\",\"error_rate\":1,\"error_status\":500}")
                     .status,
                 200);
        const HttpAnswer failed = m_agent->call(
            "POST", QStringLiteral("/api/v1/payments/confirm"),
            confirmBody(m_agent->issueToken(11, orderNo), orderNo, QStringLiteral("alipay")),
            confirmHeaders(11, "gw-1"));
        QVERIFY2(failed.status == 503 && failed.errorCode() == u"gateway_unavailable", qPrintable(describe(failed)));
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PENDING'"),
                           {orderNo}),
                 qint64(1));
        QCOMPARE(
            countRows(m_agent.database(),
                      QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ? AND status = 'failed'"),
                      {orderNo}),
            qint64(1));

        QCOMPARE(m_agent->simCall("POST", QStringLiteral("/sim/faults"), "{\"channel\":\"alipay\"}").status, 200);
        const int before = simOrdersCreated(QStringLiteral("alipay"));
        const HttpAnswer retried = m_agent->call(
            "POST", QStringLiteral("/api/v1/payments/confirm"),
            confirmBody(m_agent->issueToken(11, orderNo), orderNo, QStringLiteral("alipay")),
            confirmHeaders(11, "gw-2"));
        QVERIFY2(retried.status == 200 && !retried.json().value(QStringLiteral("code_url")).toString().isEmpty(),
                 qPrintable(describe(retried)));
        QCOMPARE(simOrdersCreated(QStringLiteral("alipay")) - before, 1);
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM payment_records WHERE order_no = ? AND attempt = 2 "
                                          "AND status = 'pending'"),
                           {orderNo}),
                 qint64(1));
    }

    // An operator forces the breaker open: confirms fail fast without reaching the
    // platform; the mode expires back to auto by itself.
    void forcedOpenBreakerFailsFastAndExpires()
    {
        const QString orderNo = QStringLiteral("ORD-FORCED");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, 12, QStringLiteral("5.00"), QStringLiteral("SKU-B"), &error),
                 qPrintable(error));
        const HttpAnswer forced = m_agent->call(
            "POST", QStringLiteral("/api/v1/breakers/gateway.wechat"),
            "{\"mode\":\"forced_open\",\"reason\":\"platform incident drill\",\"expires_in\":3}", kDesk);
        QVERIFY2(forced.status == 200 && forced.json().value(QStringLiteral("state")).toString() == u"open",
                 qPrintable(describe(forced)));
        const HttpAnswer viewer = m_agent->call("POST", QStringLiteral("/api/v1/breakers/gateway.wechat"),
                                                "{\"mode\":\"auto\",\"reason\":\"x\"}", kView);
        QCOMPARE(viewer.status, 403);

        const int requestsBefore = simRequests();
        const HttpAnswer refused = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                                 confirmBody(m_agent->issueToken(12, orderNo), orderNo),
                                                 confirmHeaders(12, "forced-1"));
        QVERIFY2(refused.status == 503 && refused.errorCode() == u"gateway_unavailable", qPrintable(describe(refused)));
        QCOMPARE(simRequests(), requestsBefore); // failed fast: the platform saw nothing
        QCOMPARE(countRows(m_agent.database(),
                           QStringLiteral("SELECT COUNT(*) FROM audit_log WHERE actor = 'desk' AND reason = ?"),
                           {QStringLiteral("platform incident drill")}),
                 qint64(1));

        // Past expires_in (3 s) the mode is back to auto by itself.
        auto wechatMode = [&] {
            const HttpAnswer list = m_agent->call("GET", QStringLiteral("/api/v1/breakers"), {}, kView);
            for (const QJsonValue &breaker : QJsonDocument::fromJson(list.body).array()) {
                if (breaker[QStringLiteral("name")].toString() == u"gateway.wechat")
                    return breaker[QStringLiteral("mode")].toString();
            }
            return QString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(wechatMode(), QStringLiteral("auto"), 15000);
        const HttpAnswer paid = m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"),
                                              confirmBody(m_agent->issueToken(12, orderNo), orderNo),
                                              confirmHeaders(12, "forced-2"));
        QVERIFY2(paid.status == 200, qPrintable(describe(paid)));
    }

    // The mode lives in the database: a second agent on the same database obeys what an
    // operator set through the first, and the reverse.
    void forcedModeIsObeyedByEveryAgent()
    {
        QString error;
        auto second = m_agent.startAnother({});
        QVERIFY(second);
        const QString orderNo = QStringLiteral("ORD-TWO-AGENTS");
        QVERIFY2(m_agent->createOrder(orderNo, 13, QStringLiteral("5.00"), QStringLiteral("SKU-T"), &error),
                 qPrintable(error));

        auto modeSeenBy = [](const AgentProcess &agent) {
            const HttpAnswer list = agent.call("GET", QStringLiteral("/api/v1/breakers"), {}, kView);
            for (const QJsonValue &breaker : QJsonDocument::fromJson(list.body).array()) {
                if (breaker[QStringLiteral("name")].toString() == u"gateway.alipay")
                    return breaker[QStringLiteral("mode")].toString();
            }
            return QString();
        };
        const HttpAnswer forced = m_agent->call(
            "POST", QStringLiteral("/api/v1/breakers/gateway.alipay"),
            "{\"mode\":\"forced_open\",\"reason\":\"alipay outage\",\"expires_in\":600}", kDesk);
        QVERIFY2(forced.status == 200, qPrintable(describe(forced)));
        // Each agent re-reads the modes about every second.
        QTRY_COMPARE_WITH_TIMEOUT(modeSeenBy(*second), QStringLiteral("forced_open"), 10000);

        const int requestsBefore = [&] {
            const QJsonObject requests = second->simCall("GET", QStringLiteral("/sim/stats"))
                                             .json()
                                             .value(QStringLiteral("requests"))
                                             .toObject();
            int total = 0;
            for (const QJsonValue &value : requests)
                total += value.toInt();
            return total;
        }();
        const HttpAnswer refused = second->call(
            "POST", QStringLiteral("/api/v1/payments/confirm"),
            confirmBody(second->issueToken(13, orderNo), orderNo, QStringLiteral("alipay")),
            confirmHeaders(13, "two-agents-1"));
        QVERIFY2(refused.status == 503 && refused.errorCode() == u"gateway_unavailable", qPrintable(describe(refused)));
        const QJsonObject requestsAfter =
            second->simCall("GET", QStringLiteral("/sim/stats")).json().value(QStringLiteral("requests")).toObject();
        int totalAfter = 0;
        for (const QJsonValue &value : requestsAfter)
            totalAfter += value.toInt();
        QCOMPARE(totalAfter, requestsBefore); // the second agent failed fast too

        // Back to auto through the second agent; the first one follows.
        const HttpAnswer reset = second->call("POST", QStringLiteral("/api/v1/breakers/gateway.alipay"),
                                              "{\"mode\":\"auto\",\"reason\":\"alipay recovered\"}", kDesk);
        QVERIFY2(reset.status == 200, qPrintable(describe(reset)));
        QTRY_COMPARE_WITH_TIMEOUT(modeSeenBy(*m_agent), QStringLiteral("auto"), 10000);
        QCOMPARE(second->stop(), 0);
    }

private:
    int simOrdersCreated(const QString &channel = QStringLiteral("wechat")) const
    {
        const QJsonObject stats = m_agent->simCall("GET", QStringLiteral("/sim/stats")).json();
        return stats.value(QStringLiteral("orders_created")).toObject().value(channel).toInt(-1);
    }
    int simRequests() const
    {
        const QJsonObject requests =
            m_agent->simCall("GET", QStringLiteral("/sim/stats")).json().value(QStringLiteral("requests")).toObject();
        int total = 0;
        for (const QJsonValue &value : requests)
            total += value.toInt();
        return total;
    }

    AgentFixture m_agent;
};

QTEST_GUILESS_MAIN(TestPaymentPath)
#include "tst_paymentpath.moc"
