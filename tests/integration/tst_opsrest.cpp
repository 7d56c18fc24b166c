// The rest of the operations API on the real agent with payonce-sim, per dialect:
// every operations endpoint's roles; the callback inspector; the replay of a stored
// delivery (absorbed without a second effect) and its dry run, which writes nothing and
// predicts the real replay over processed, accepted, amount-mismatched and unknown
// pay_nos; the L1 inspector and unlock; GET /api/v1/locks with a delivery parked holding
// its pay lock. The slots run in order and share the first agent and its database.

#include "agentconfig.h"
#include "agentfixture.h"
#include "auditrefusal.h"
#include "storagefixture.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

/// Each effect of a paid order (stock, coupon, points, the order.paid event), counted by order_no.
const char *const kEffectsOfAnOrder[] = {
    "SELECT COUNT(*) FROM stock_log WHERE order_no = ?",
    "SELECT COUNT(*) FROM user_coupon WHERE order_no = ?",
    "SELECT COUNT(*) FROM point_log WHERE order_no = ?",
    "SELECT COUNT(*) FROM outbox WHERE aggregate_id = ?",
};

const qint64 kUser = 88;

QByteArray reason(const QString &text)
{
    return QJsonDocument(QJsonObject{{QStringLiteral("reason"), text}}).toJson(QJsonDocument::Compact);
}

// What "nothing written" is checked against: row counts of every business table, and the
// sums that an update without a new row would move.
const char *const kSnapshot[] = {
    "SELECT COUNT(*) FROM orders",
    "SELECT COALESCE(SUM(version), 0) FROM orders",
    "SELECT COUNT(*) FROM orders WHERE status = 'PAID'",
    "SELECT COUNT(*) FROM order_items",
    "SELECT COALESCE(SUM(stock), 0) FROM skus",
    "SELECT COUNT(*) FROM idempotency_keys",
    "SELECT COUNT(*) FROM payment_records",
    "SELECT COUNT(*) FROM payment_records WHERE status = 'paid'",
    "SELECT COUNT(*) FROM pay_callback_log",
    "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'processed'",
    "SELECT COUNT(*) FROM callback_deliveries",
    "SELECT COUNT(*) FROM stock_log",
    "SELECT COUNT(*) FROM user_coupon",
    "SELECT COUNT(*) FROM point_log",
    "SELECT COUNT(*) FROM outbox",
    "SELECT COUNT(*) FROM findings",
    "SELECT COALESCE(SUM(seen_count), 0) FROM findings",
    "SELECT COUNT(*) FROM compensations",
    "SELECT COUNT(*) FROM audit_log",
};

} // namespace

class TestOpsRest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        // No patrol or closer timers: every write in this database is the test's own doing
        // or the callback path's.
        options.extraConfig = QJsonObject{
            noPatrolTimer(),
            noOrderCloser(),
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
        QVERIFY(pay(QStringLiteral("ORD-REST-1"), QStringLiteral("SKU-REST-1"), true));
    }
    void cleanupTestCase() { m_agent.stop(); }

    // Every operations endpoint: no token 401; a role too low 403; the role it needs gets
    // past authorization (bad input then answers 400 and nothing is written).
    void rolesOnEveryOperationsEndpoint_data()
    {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QByteArray>("lowToken"); // one role below what it needs; empty: viewer suffices
        QTest::addColumn<QByteArray>("needToken");
        const QByteArray bad = "{}"; // no reason: 400 once authorized
        auto row = [](const char *name, const QByteArray &method, const QString &path, const QByteArray &body,
                      const QByteArray &low,
                      const QByteArray &need) { QTest::newRow(name) << method << path << body << low << need; };
        row("outbox list", "GET", QStringLiteral("/api/v1/outbox"), {}, {}, kViewToken);
        row("outbox redrive", "POST", QStringLiteral("/api/v1/outbox/1/redrive"), bad, kViewToken, kDeskToken);
        row("findings", "GET", QStringLiteral("/api/v1/findings"), {}, {}, kViewToken);
        row("compensations list", "GET", QStringLiteral("/api/v1/compensations"), {}, {}, kViewToken);
        row("compensation propose", "POST", QStringLiteral("/api/v1/compensations"), bad, kViewToken, kDeskToken);
        row("compensation approve", "POST", QStringLiteral("/api/v1/compensations/1/approve"), bad, kDeskToken,
            kLeadToken);
        row("compensation reject", "POST", QStringLiteral("/api/v1/compensations/1/reject"), bad, kDeskToken,
            kLeadToken);
        row("reconciliation run", "POST", QStringLiteral("/api/v1/reconciliation/run"), bad, kViewToken, kDeskToken);
        row("close expired", "POST", QStringLiteral("/api/v1/orders/close-expired"), bad, kViewToken, kDeskToken);
        row("audit", "GET", QStringLiteral("/api/v1/audit"), {}, {}, kViewToken);
        row("breakers", "GET", QStringLiteral("/api/v1/breakers"), {}, {}, kViewToken);
        row("breaker set", "POST", QStringLiteral("/api/v1/breakers/gateway.wechat"), bad, kViewToken, kDeskToken);
        row("mode", "GET", QStringLiteral("/api/v1/mode"), {}, {}, kViewToken);
        row("mode set", "PUT", QStringLiteral("/api/v1/mode"), bad, kViewToken, kDeskToken);
        row("callbacks", "GET", QStringLiteral("/api/v1/callbacks?pay_no=X1"), {}, {}, kViewToken);
        row("callback replay", "POST", QStringLiteral("/api/v1/callbacks/wechat/X1/replay"), bad, kViewToken,
            kDeskToken);
        row("idempotency keys", "GET", QStringLiteral("/api/v1/idempotency-keys?user_id=1&key=k"), {}, {}, kViewToken);
        row("idempotency unlock", "POST", QStringLiteral("/api/v1/idempotency-keys/1/k/unlock"), bad, kViewToken,
            kDeskToken);
        row("locks", "GET", QStringLiteral("/api/v1/locks"), {}, {}, kViewToken);
        row("stored locks", "GET", QStringLiteral("/api/v1/locks/keys"), {}, {}, kViewToken);
    }
    void rolesOnEveryOperationsEndpoint()
    {
        QFETCH(QByteArray, method);
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        QFETCH(QByteArray, lowToken);
        QFETCH(QByteArray, needToken);
        const auto before = snapshot();
        const QString source = QStringLiteral("127.0.1.%1").arg(++m_sourceAddress);
        QCOMPARE(statusFrom(source, m_agent->port(), method, path, body, {}), 401);
        QCOMPARE(statusFrom(source, m_agent->port(), method, path, body, "no-such-token"), 401);
        if (!lowToken.isEmpty()) {
            const HttpAnswer low = m_agent->call(method, path, body, bearer(lowToken));
            QVERIFY2(low.status == 403, qPrintable(describe(low)));
            QCOMPARE(low.errorCode(), QStringLiteral("forbidden"));
        }
        const HttpAnswer allowed = m_agent->call(method, path, body, bearer(needToken));
        QVERIFY2(allowed.status != 401 && allowed.status != 403, qPrintable(describe(allowed)));
        if (method != "GET")
            QVERIFY2(allowed.status == 400 && allowed.errorCode() == u"invalid_request", qPrintable(describe(allowed)));
        QCOMPARE(snapshot(), before);
    }

    // The inspector shows the deliveries and the log row of a paid order, by pay_no and by
    // order_no; neither or both parameters are refused.
    void callbackInspector()
    {
        const QString payNo = payNoOf(QStringLiteral("ORD-REST-1"));
        QVERIFY(!payNo.isEmpty());
        for (const QString &query :
             QStringList{QString(QStringLiteral("pay_no=") + payNo), QStringLiteral("order_no=ORD-REST-1")}) {
            const HttpAnswer answer = get(QStringLiteral("/api/v1/callbacks?") + query, kViewToken);
            QVERIFY2(answer.status == 200, qPrintable(describe(answer)));
            const QJsonArray deliveries = answer.json().value(QStringLiteral("deliveries")).toArray();
            QVERIFY(!deliveries.isEmpty());
            const QJsonObject first = deliveries.first().toObject();
            QCOMPARE(first.value(QStringLiteral("channel")).toString(), QStringLiteral("wechat"));
            QCOMPARE(first.value(QStringLiteral("verified")).toBool(), true);
            QCOMPARE(first.value(QStringLiteral("layer")).toString(), QStringLiteral("none"));
            QCOMPARE(first.value(QStringLiteral("pay_no")).toString(), payNo);
            QVERIFY(QDateTime::fromString(first.value(QStringLiteral("received_at")).toString(), Qt::ISODateWithMs)
                        .isValid());
            const QJsonArray log = answer.json().value(QStringLiteral("log")).toArray();
            QCOMPARE(log.size(), 1);
            QCOMPARE(log.first().toObject().value(QStringLiteral("status")).toString(), QStringLiteral("processed"));
            QCOMPARE(log.first().toObject().value(QStringLiteral("outcome")).toString(), QStringLiteral("processed"));
        }
        for (const QString &query : {QString(), QStringLiteral("?pay_no=%1&order_no=ORD-REST-1").arg(payNo),
                                     QStringLiteral("?pay_no="), QStringLiteral("?order_no=ORD-REST-1&limit=0")}) {
            const HttpAnswer refused = get(QStringLiteral("/api/v1/callbacks") + query, kViewToken);
            QVERIFY2(refused.status == 400 && refused.errorCode() == u"invalid_request", qPrintable(describe(refused)));
        }
    }

    // A paid notification whose delivery retention deleted (its log row kept longer): the
    // replay is refused 404 not_found, saying it was received and is past retention, and
    // writes nothing.
    void replayPastRetentionSaysSo()
    {
        const QString orderNo = QStringLiteral("ORD-REST-RETAINED");
        QVERIFY(pay(orderNo, QStringLiteral("SKU-REST-RETAINED"), true));
        const QString payNo = payNoOf(orderNo);
        exec("DELETE FROM callback_deliveries WHERE pay_no = ?", {payNo}); // as retention does
        const auto before = snapshot();
        const HttpAnswer replayed = post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("dispute 7")));
        QVERIFY2(replayed.status == 404 && replayed.errorCode() == u"not_found", qPrintable(describe(replayed)));
        const QString message =
            replayed.json().value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
        QVERIFY2(message.contains(u"past retention") && message.contains(u"retention.deliveries_days"),
                 qPrintable(message));
        QCOMPARE(snapshot(), before);
    }

    // A replay of a processed pay_no is absorbed: SUCCESS, named by its layer, no second
    // effect, audited with the operator as actor and the reason.
    void replayOfProcessedIsAbsorbed()
    {
        const QString payNo = payNoOf(QStringLiteral("ORD-REST-1"));
        const auto before = snapshot();
        const HttpAnswer replayed = post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("ticket 42")));
        QVERIFY2(replayed.status == 200, qPrintable(describe(replayed)));
        const QJsonObject answer = replayed.json();
        QCOMPARE(answer.value(QStringLiteral("outcome")).toString(), QStringLiteral("success"));
        QCOMPARE(answer.value(QStringLiteral("layer")).toString(), QStringLiteral("unique_index"));
        QVERIFY(answer.value(QStringLiteral("note")).toString() == u"seen_processed"
                || answer.value(QStringLiteral("note")).toString() == u"log_row_exists");
        QCOMPARE(replayed.header("X-Payonce-Layer"), QByteArray("unique_index"));
        auto after = snapshot();
        QCOMPARE(after.takeLast(), before.last() + 1); // audit_log: the replay's row, nothing else
        QCOMPARE(after, before.mid(0, before.size() - 1));
        for (const char *table : {"stock_log", "user_coupon", "point_log", "outbox"})
            QCOMPARE(m_agent.count(QStringLiteral("SELECT COUNT(*) FROM %1 WHERE %2 = ?")
                                       .arg(QLatin1String(table), table == QByteArray("outbox")
                                                                      ? QStringLiteral("aggregate_id")
                                                                      : QStringLiteral("order_no")),
                                   {QStringLiteral("ORD-REST-1")}),
                     qint64(1));
        const QJsonArray audit = auditRows(QStringLiteral("callback.replay"),
                                           QStringLiteral("callback:wechat:") + payNo);
        QCOMPARE(audit.size(), 1);
        QCOMPARE(audit.first().toObject().value(QStringLiteral("actor")).toString(), QStringLiteral("desk"));
        QCOMPARE(audit.first().toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("ticket 42"));

        // Bad input: nothing written.
        const auto unchanged = snapshot();
        QCOMPARE(post(replayPath(payNo, false), kDeskToken, "{}").status, 400);
        QCOMPARE(post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("  "))).status, 400);
        QCOMPARE(post(QStringLiteral("/api/v1/callbacks/paypal/%1/replay").arg(payNo), kDeskToken,
                      reason(QStringLiteral("x")))
                     .status,
                 400);
        QCOMPARE(
            post(replayPath(payNo, false) + QStringLiteral("?dry_run=maybe"), kDeskToken, reason(QStringLiteral("x")))
                .status,
            400);
        QCOMPARE(snapshot(), unchanged);
    }

    // The dry run writes nothing, and the real replay then does what it predicted.
    void dryRunPredictsTheReplay_data()
    {
        QTest::addColumn<QString>("orderNo");
        QTest::addColumn<QString>("setUp");   // "processed", "accepted", "amount_mismatch", "never_seen"
        QTest::addColumn<QString>("outcome"); // expected; empty: 404
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QString>("note");
        QTest::newRow("processed") << QStringLiteral("ORD-REST-1") << QStringLiteral("processed")
                                   << QStringLiteral("success") << QStringLiteral("unique_index") << QString();
        QTest::newRow("accepted") << QStringLiteral("ORD-REST-2") << QStringLiteral("accepted")
                                  << QStringLiteral("success") << QStringLiteral("none") << QStringLiteral("processed");
        QTest::newRow("amount mismatch") << QStringLiteral("ORD-REST-3") << QStringLiteral("amount_mismatch")
                                         << QStringLiteral("content_mismatch") << QStringLiteral("rejected")
                                         << QStringLiteral("amount_mismatch");
        QTest::newRow("never seen") << QStringLiteral("ORD-REST-NONE") << QStringLiteral("never_seen") << QString()
                                    << QString() << QString();
    }
    void dryRunPredictsTheReplay()
    {
        QFETCH(QString, orderNo);
        QFETCH(QString, setUp);
        QFETCH(QString, outcome);
        QFETCH(QString, layer);
        QFETCH(QString, note);
        QString payNo = QStringLiteral("NEVER-SEEN-1");
        if (setUp == u"accepted") {
            // Accept-only mode: the delivery stops at its durable `accepted` log row and the
            // worker leaves it alone — the row stays as it is until the replay.
            setMode("accept_only");
            // The pipeline reuses its read of the shared mode for up to a second (modeCacheMs).
            QTest::qWait(1100);
            QVERIFY(pay(orderNo, QStringLiteral("SKU-REST-2"), false));
            QTRY_COMPARE_WITH_TIMEOUT(
                m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'accepted'",
                              {orderNo}),
                qint64(1), 30000);
            payNo = payNoFromLog(orderNo);
            QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}),
                     qint64(0));
        } else if (setUp == u"amount_mismatch") {
            QVERIFY(pay(orderNo, QStringLiteral("SKU-REST-3"), true));
            payNo = payNoOf(orderNo);
            // The stored delivery no longer matches the order (as if the order were edited).
            exec("UPDATE orders SET amount_fen = amount_fen + 1 WHERE order_no = ?", {orderNo});
        } else if (setUp == u"processed") {
            payNo = payNoOf(orderNo);
        }
        QVERIFY(!payNo.isEmpty());

        const auto before = snapshot();
        const HttpAnswer dry = post(replayPath(payNo, true), kDeskToken, reason(QStringLiteral("what if")));
        QCOMPARE(snapshot(), before); // not even an audit row
        if (outcome.isEmpty()) {
            QVERIFY2(dry.status == 404 && dry.errorCode() == u"not_found", qPrintable(describe(dry)));
            const HttpAnswer real = post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("try")));
            QVERIFY2(real.status == 404 && real.errorCode() == u"not_found", qPrintable(describe(real)));
            QCOMPARE(snapshot(), before);
            return;
        }
        QVERIFY2(dry.status == 200, qPrintable(describe(dry)));
        const QJsonObject predicted = dry.json();
        QCOMPARE(predicted.value(QStringLiteral("dry_run")).toBool(), true);
        QCOMPARE(predicted.value(QStringLiteral("outcome")).toString(), outcome);
        QCOMPARE(predicted.value(QStringLiteral("layer")).toString(), layer);
        if (!note.isEmpty())
            QCOMPARE(predicted.value(QStringLiteral("note")).toString(), note);
        const QJsonArray changes = predicted.value(QStringLiteral("changes")).toArray();
        QCOMPARE(changes.isEmpty(), layer == u"unique_index");

        const HttpAnswer real = post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("do it")));
        QVERIFY2(real.status == 200, qPrintable(describe(real)));
        for (const char *field : {"outcome", "layer", "note", "order_no"})
            QCOMPARE(real.json().value(QLatin1String(field)), predicted.value(QLatin1String(field)));
        QCOMPARE(real.json().value(QStringLiteral("dry_run")).toBool(), false);

        if (setUp == u"accepted") {
            // Finished once: PAID, every effect once, the row processed.
            QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}),
                     qint64(1));
            QCOMPARE(m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'processed'",
                                   {orderNo}),
                     qint64(1));
            for (const char *sql : kEffectsOfAnOrder)
                QCOMPARE(m_agent.count(sql, {orderNo}), qint64(1));
            setMode("normal");
        } else if (setUp == u"amount_mismatch") {
            QCOMPARE(m_agent.count("SELECT COUNT(*) FROM findings WHERE kind = 'amount_mismatch' AND order_no = ?",
                                   {orderNo}),
                     qint64(1));
            exec("UPDATE orders SET amount_fen = amount_fen - 1 WHERE order_no = ?", {orderNo});
        }
        const QJsonArray audit = auditRows(QStringLiteral("callback.replay"),
                                           QStringLiteral("callback:wechat:") + payNo);
        QVERIFY(!audit.isEmpty());
        QCOMPARE(audit.first().toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("do it"));
    }

    // The L1 inspector shows a completed record with its stored response; unlock refuses
    // a completed or fresh in_flight record and releases one stuck past its timeout.
    void idempotencyInspectorAndUnlock()
    {
        const HttpAnswer completed = get(
            QStringLiteral("/api/v1/idempotency-keys?user_id=%1&key=ORD-REST-1").arg(kUser), kViewToken);
        QVERIFY2(completed.status == 200, qPrintable(describe(completed)));
        QCOMPARE(completed.json().value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(completed.json().value(QStringLiteral("fingerprint")).toString().size(), 64);
        const QJsonObject response = completed.json().value(QStringLiteral("response")).toObject();
        QCOMPARE(response.value(QStringLiteral("status")).toInt(), 200);
        QCOMPARE(response.value(QStringLiteral("body")).toObject().value(QStringLiteral("order_no")).toString(),
                 QStringLiteral("ORD-REST-1"));
        const QString unlockCompleted = QStringLiteral("/api/v1/idempotency-keys/%1/ORD-REST-1/unlock").arg(kUser);
        const auto before = snapshot();
        QCOMPARE(post(unlockCompleted, kDeskToken, reason(QStringLiteral("stuck?"))).errorCode(),
                 QStringLiteral("conflict"));
        QCOMPARE(post(QStringLiteral("/api/v1/idempotency-keys/%1/no-such-key/unlock").arg(kUser), kDeskToken,
                      reason(QStringLiteral("stuck?")))
                     .status,
                 404);
        QCOMPARE(
            get(QStringLiteral("/api/v1/idempotency-keys?user_id=%1&key=no-such-key").arg(kUser), kViewToken).status,
            404);
        QCOMPARE(get(QStringLiteral("/api/v1/idempotency-keys?user_id=x&key=k"), kViewToken).status, 400);
        QCOMPARE(get(QStringLiteral("/api/v1/idempotency-keys?user_id=1"), kViewToken).status, 400);
        QCOMPARE(post(unlockCompleted, kDeskToken, "{}").status, 400);

        // A record in_flight, locked just now: not yet past the timeout.
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        exec("INSERT INTO idempotency_keys (user_id, idem_key, fingerprint, status, locked_at, created_at) "
             "VALUES (?, 'stuck-1', 'abc', 'in_flight', ?, ?)",
             {kUser, now, now});
        const QString unlockStuck = QStringLiteral("/api/v1/idempotency-keys/%1/stuck-1/unlock").arg(kUser);
        const HttpAnswer fresh = post(unlockStuck, kDeskToken, reason(QStringLiteral("stuck?")));
        QVERIFY2(fresh.status == 409 && fresh.errorCode() == u"conflict", qPrintable(describe(fresh)));
        auto afterRefusals = snapshot();
        QCOMPARE(afterRefusals[5], before[5] + 1); // idempotency_keys: the inserted record
        afterRefusals[5] = before[5];
        QCOMPARE(afterRefusals, before); // no refusal wrote anything (no audit row either)

        const HttpAnswer inFlight = get(QStringLiteral("/api/v1/idempotency-keys?user_id=%1&key=stuck-1").arg(kUser),
                                        kViewToken);
        QCOMPARE(inFlight.json().value(QStringLiteral("status")).toString(), QStringLiteral("in_flight"));
        QVERIFY(inFlight.json().value(QStringLiteral("response")).isNull());
        QVERIFY(!inFlight.json().value(QStringLiteral("locked_at")).toString().isEmpty());

        // Locked two minutes ago: past the 60 s timeout, released.
        exec("UPDATE idempotency_keys SET locked_at = ? WHERE user_id = ? AND idem_key = 'stuck-1'",
             {now - 120000, kUser});
        const HttpAnswer unlocked = post(unlockStuck, kDeskToken, reason(QStringLiteral("agent died, INC-7")));
        QVERIFY2(unlocked.status == 200, qPrintable(describe(unlocked)));
        QCOMPARE(unlocked.json().value(QStringLiteral("unlocked")).toBool(), true);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = 'stuck-1'"), qint64(0));
        QCOMPARE(get(QStringLiteral("/api/v1/idempotency-keys?user_id=%1&key=stuck-1").arg(kUser), kViewToken).status,
                 404);
        const QJsonArray audit = auditRows(QStringLiteral("idempotency.unlock"), QString());
        QCOMPARE(audit.size(), 1);
        QCOMPARE(audit.first().toObject().value(QStringLiteral("actor")).toString(), QStringLiteral("desk"));
        QCOMPARE(audit.first().toObject().value(QStringLiteral("reason")).toString(),
                 QStringLiteral("agent died, INC-7"));
    }

    // An unlock and its audit row commit together: with the row refused by the database,
    // the record is still there and the answer is an error; once rows are written again,
    // the same unlock releases it with exactly one audit row.
    void unlockCommitsWithItsAuditRow()
    {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        exec("INSERT INTO idempotency_keys (user_id, idem_key, fingerprint, status, locked_at, created_at) "
             "VALUES (?, 'stuck-2', 'abc', 'in_flight', ?, ?)",
             {kUser, now - 120000, now - 120000});
        const QString unlock = QStringLiteral("/api/v1/idempotency-keys/%1/stuck-2/unlock").arg(kUser);
        const qint64 auditBefore = m_agent.count("SELECT COUNT(*) FROM audit_log");
        auto refused = refuseAuditRows(m_agent.database(), {QStringLiteral("idempotency.unlock")});
        QVERIFY2(refused.ok(), refused.ok() ? "" : qPrintable(refused.error().internalMessage));
        const HttpAnswer failed = post(unlock, kDeskToken, reason(QStringLiteral("INC-8")));
        auto allowed = allowAuditRows(m_agent.database());
        QVERIFY2(allowed.ok(), allowed.ok() ? "" : qPrintable(allowed.error().internalMessage));
        QVERIFY2(failed.status >= 500, qPrintable(describe(failed)));
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = 'stuck-2' AND status = 'in_flight'"),
            qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM audit_log"), auditBefore);

        const HttpAnswer unlocked = post(unlock, kDeskToken, reason(QStringLiteral("INC-8")));
        QVERIFY2(unlocked.status == 200, qPrintable(describe(unlocked)));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = 'stuck-2'"), qint64(0));
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM audit_log WHERE action = 'idempotency.unlock' AND reason = 'INC-8'"),
            qint64(1));
    }

    // The accept-only switch and its audit row commit together: refused, the mode is as it
    // was (on this agent too) and the answer is an error; allowed again, it is set once.
    void modeSetCommitsWithItsAuditRow()
    {
        const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("callbacks"), QStringLiteral("accept_only")},
                                                          {QStringLiteral("reason"), QStringLiteral("INC-10")}})
                                    .toJson(QJsonDocument::Compact);
        const qint64 auditBefore = m_agent.count("SELECT COUNT(*) FROM audit_log");
        auto refused = refuseAuditRows(m_agent.database(), {QStringLiteral("mode.set")});
        QVERIFY2(refused.ok(), refused.ok() ? "" : qPrintable(refused.error().internalMessage));
        const HttpAnswer failed = m_agent->call("PUT", QStringLiteral("/api/v1/mode"), body, kDesk);
        auto allowed = allowAuditRows(m_agent.database());
        QVERIFY2(allowed.ok(), allowed.ok() ? "" : qPrintable(allowed.error().internalMessage));
        QVERIFY2(failed.status >= 500, qPrintable(describe(failed)));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM audit_log"), auditBefore);
        const HttpAnswer still = get(QStringLiteral("/api/v1/mode"), kViewToken);
        QVERIFY2(still.status == 200, qPrintable(describe(still)));
        QCOMPARE(still.json().value(QStringLiteral("callbacks")).toString(), QStringLiteral("normal"));

        const HttpAnswer set = m_agent->call("PUT", QStringLiteral("/api/v1/mode"), body, kDesk);
        QVERIFY2(set.status == 200, qPrintable(describe(set)));
        QCOMPARE(get(QStringLiteral("/api/v1/mode"), kViewToken).json().value(QStringLiteral("callbacks")).toString(),
                 QStringLiteral("accept_only"));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM audit_log WHERE action = 'mode.set' AND reason = 'INC-10'"),
                 qint64(1));
        setMode("normal");
    }

    // A replay that settles an order commits with its audit row: refused, the accepted row
    // stays accepted and the order unpaid, with no effect written; allowed again, the
    // replay pays it once and is audited once.
    void replayCommitsWithItsAuditRow()
    {
        const QString orderNo = QStringLiteral("ORD-REST-AUDIT");
        setMode("accept_only"); // this agent obeys it from the next delivery on
        QVERIFY(pay(orderNo, QStringLiteral("SKU-REST-AUDIT"), false));
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'accepted'",
                          {orderNo}),
            qint64(1), 30000);
        const QString payNo = payNoFromLog(orderNo);
        QVERIFY(!payNo.isEmpty());

        const auto before = snapshot();
        auto refused = refuseAuditRows(m_agent.database(), {QStringLiteral("callback.replay")});
        QVERIFY2(refused.ok(), refused.ok() ? "" : qPrintable(refused.error().internalMessage));
        const HttpAnswer failed = post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("INC-9")));
        auto allowed = allowAuditRows(m_agent.database());
        QVERIFY2(allowed.ok(), allowed.ok() ? "" : qPrintable(allowed.error().internalMessage));
        QVERIFY2(failed.status >= 500, qPrintable(describe(failed)));
        QCOMPARE(snapshot(), before);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}),
                 qint64(0));

        const HttpAnswer replayed = post(replayPath(payNo, false), kDeskToken, reason(QStringLiteral("INC-9")));
        QVERIFY2(replayed.status == 200, qPrintable(describe(replayed)));
        QCOMPARE(replayed.json().value(QStringLiteral("note")).toString(), QStringLiteral("processed"));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}),
                 qint64(1));
        for (const char *sql : kEffectsOfAnOrder)
            QCOMPARE(m_agent.count(sql, {orderNo}), qint64(1));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM audit_log WHERE action = 'callback.replay' AND reason = 'INC-9'"),
                 qint64(1));
        setMode("normal");
    }

    // A delivery parked holding its pay lock (test hook) shows in GET /api/v1/locks: held,
    // owned, fenced for its order, renewed by the watchdog; the order's last token listed.
    void locksShowAHeldLock()
    {
        QString error;
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{qaEnabled(), noPatrolTimer()};
        options.environment = {QStringLiteral("PAYONCE_TEST_PAUSE_AT=after_lock_before_begin")};
        // An agent and a database of its own: the parked delivery never lets it drain.
        AgentFixture held;
        QVERIFY2(held.start(options), held.error());
        const QString orderNo = QStringLiteral("ORD-LOCK-1");
        QVERIFY2(
            !held->orderPaidAtSim(orderNo, kUser, QStringLiteral("3.00"), QStringLiteral("SKU-LOCK"), &error).isEmpty(),
            qPrintable(error));
        QTRY_VERIFY2_WITH_TIMEOUT(held->output().contains(u"paused holding the lock"), qPrintable(held->output()),
                                  30000);

        auto heldLock = [&]() -> QJsonObject {
            const HttpAnswer answer = held->call("GET", QStringLiteral("/api/v1/locks"), {}, kView);
            for (const QJsonValue &lock : answer.json().value(QStringLiteral("locks")).toArray()) {
                if (lock.toObject().value(QStringLiteral("fence_scope")).toString() == orderNo)
                    return lock.toObject();
            }
            return {};
        };
        const QJsonObject lock = heldLock();
        QVERIFY2(!lock.isEmpty(), qPrintable(held->output()));
        QVERIFY(lock.value(QStringLiteral("key")).toString().startsWith(u"lock:pay:"));
        QCOMPARE(lock.value(QStringLiteral("state")).toString(), QStringLiteral("held"));
        QCOMPARE(lock.value(QStringLiteral("owner")).toString().size(), 32);
        QVERIFY(lock.value(QStringLiteral("fencing_token")).toString().toULongLong() > 0);
        QVERIFY(lock.value(QStringLiteral("ttl_left_ms")).toInteger() > 0);
        QVERIFY(!lock.value(QStringLiteral("acquired_at")).toString().isEmpty());
        // The watchdog keeps the parked holder's lease alive (every ttl/3).
        QTRY_VERIFY_WITH_TIMEOUT(heldLock().value(QStringLiteral("renewals")).toInteger() >= 1, 30000);
        QCOMPARE(heldLock().value(QStringLiteral("state")).toString(), QStringLiteral("held"));

        const HttpAnswer answer = held->call("GET", QStringLiteral("/api/v1/locks"), {}, kView);
        bool tokenListed = false;
        for (const QJsonValue &fence : answer.json().value(QStringLiteral("fencing_tokens")).toArray()) {
            if (fence.toObject().value(QStringLiteral("order_no")).toString() == orderNo)
                tokenListed = fence.toObject().value(QStringLiteral("token"))
                              == lock.value(QStringLiteral("fencing_token"));
        }
        QVERIFY(tokenListed);
        QCOMPARE(answer.json().value(QStringLiteral("stale_fence_refused")).toInteger(), qint64(0));
        // The key store this agent runs (the embedded one: no Redis in this test) and its epoch.
        const QJsonObject keyStore = answer.json().value(QStringLiteral("key_store")).toObject();
        QCOMPARE(keyStore.value(QStringLiteral("mode")).toString(), QStringLiteral("embedded"));
        QVERIFY(keyStore.value(QStringLiteral("fence_epoch")).toString().toULongLong() >= 1);
        QCOMPARE(lock.value(QStringLiteral("fencing_token")).toString().toULongLong() >> 32,
                 keyStore.value(QStringLiteral("fence_epoch")).toString().toULongLong());
        QCOMPARE(keyStore.value(QStringLiteral("master_switches")).toInteger(), qint64(0));
        QCOMPARE(keyStore.value(QStringLiteral("degraded")).toBool(true), false);
        // The key inspector reads the store itself: the parked holder's lock, live, not stuck.
        const HttpAnswer scanned = held->call("GET", QStringLiteral("/api/v1/locks/keys"), {}, kView);
        QCOMPARE(scanned.status, 200);
        const QJsonObject scan = scanned.json();
        QCOMPARE(scan.value(QStringLiteral("nodes")).toArray(), QJsonArray{QStringLiteral("embedded")});
        QVERIFY(scan.value(QStringLiteral("failures")).toArray().isEmpty());
        QCOMPARE(scan.value(QStringLiteral("stuck")).toInt(-1), 0);
        QVERIFY(scan.value(QStringLiteral("lock_ttl_ms")).toInteger() > 0);
        bool stored = false;
        for (const QJsonValue &value : scan.value(QStringLiteral("locks")).toArray()) {
            const QJsonObject row = value.toObject();
            if (row.value(QStringLiteral("key")) != lock.value(QStringLiteral("key")))
                continue;
            stored = true;
            QCOMPARE(row.value(QStringLiteral("owner")), lock.value(QStringLiteral("owner")));
            QCOMPARE(row.value(QStringLiteral("held_by_this_agent")).toBool(), true);
            QCOMPARE(row.value(QStringLiteral("stuck")).toBool(true), false);
            QVERIFY(row.value(QStringLiteral("stuck_reason")).isNull());
            QVERIFY(row.value(QStringLiteral("ttl_left_ms")).toInteger() > 0);
        }
        QVERIFY2(stored, scanned.body.constData());
        const HttpAnswer badLimit = held->call("GET", QStringLiteral("/api/v1/locks/keys?limit=0"), {}, kView);
        QCOMPARE(badLimit.status, 400);
        QCOMPARE(badLimit.errorCode(), QStringLiteral("invalid_request"));
        QCOMPARE(held.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}),
                 qint64(0));
        // The parked delivery never finishes: the agent cannot drain, so it is killed.
        held->killHard();
    }

private:
    HttpAnswer get(const QString &path, const QByteArray &token) const
    {
        return m_agent->call("GET", path, {}, bearer(token));
    }
    HttpAnswer post(const QString &path, const QByteArray &token, const QByteArray &body) const
    {
        return m_agent->call("POST", path, body, bearer(token));
    }
    static QString replayPath(const QString &payNo, bool dryRun)
    {
        return QStringLiteral("/api/v1/callbacks/wechat/%1/replay%2")
            .arg(payNo, dryRun ? QStringLiteral("?dry_run=true") : QString());
    }

    /// An order of one unit of `sku` paid at the simulator; with waitPaid, true once PAID.
    bool pay(const QString &orderNo, const QString &sku, bool waitPaid)
    {
        QString error;
        if (m_agent->orderPaidAtSim(orderNo, kUser, QStringLiteral("12.00"), sku, &error).isEmpty()) {
            qWarning("%s", qPrintable(error));
            return false;
        }
        return !waitPaid
               || QTest::qWaitFor(
                   [&] {
                       return m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'",
                                            {orderNo})
                              == 1;
                   },
                   30000);
    }

    QJsonArray auditRows(const QString &action, const QString &target) const
    {
        QString query = QStringLiteral("/api/v1/audit?action=") + action;
        if (!target.isEmpty())
            query += QStringLiteral("&target=") + target;
        return QJsonDocument::fromJson(get(query, kViewToken).body).array();
    }

    QString payNoOf(const QString &orderNo) const
    {
        return m_agent->call("GET", QStringLiteral("/api/v1/orders/") + orderNo, {}, kView)
            .json()
            .value(QStringLiteral("pay_no"))
            .toString();
    }

    QString payNoFromLog(const QString &orderNo) const
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/api/v1/callbacks?order_no=") + orderNo, {},
                                                kView);
        const QJsonArray log = answer.json().value(QStringLiteral("log")).toArray();
        return log.isEmpty() ? QString() : log.first().toObject().value(QStringLiteral("pay_no")).toString();
    }

    void setMode(const char *mode)
    {
        const HttpAnswer set = m_agent.setCallbackMode(QLatin1String(mode), QStringLiteral("replay test"));
        QVERIFY2(set.status == 200, qPrintable(describe(set)));
    }

    QList<qint64> snapshot()
    {
        QList<qint64> values;
        for (const char *sql : kSnapshot)
            values.append(m_agent.count(sql));
        return values;
    }

    void exec(const char *sql, const QVariantList &binds) { QVERIFY(m_agent.exec(sql, binds)); }

    AgentFixture m_agent;
    int m_sourceAddress = 0;
};

QTEST_GUILESS_MAIN(TestOpsRest)
#include "tst_opsrest.moc"
