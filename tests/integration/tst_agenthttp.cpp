// The connection guard's promises (tst_httpguard) proven on the REAL payonce-agent, not
// on payonce-http-testserver: the agent binary with payonce-sim beside it (sim.enabled),
// on a temporary SQLite database, configured through its config file (http.* keys).
//
// - a disconnect storm on the confirm route under valgrind, with the simulator's WeChat
//   answers 300 ms late (clients gone while their handler still runs);
// - 500 idle keep-alive connections closed by http.idle_timeout_ms;
// - a 200 MB Content-Length on the confirm route refused 413 before buffering.
#include "agentfixture.h"
#include "httptestsupport.h"
#include "serverharness.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpSocket>
#include <QTest>

#include <algorithm>
#include <memory>
#include <vector>

using namespace payonce::testsupport;

class TestAgentHttp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void confirmDisconnectStormUnderValgrind();
    void idleKeepAliveConnectionsClosed();
    void hugeContentLengthOnConfirmRefusedBeforeBuffering();
};

namespace {

QByteArray confirmRequest(const QString &token, const QString &orderNo, qint64 userId, const QByteArray &key)
{
    const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                                      {QStringLiteral("order_no"), orderNo},
                                                      {QStringLiteral("channel"), QStringLiteral("wechat")}})
                                .toJson(QJsonDocument::Compact);
    return "POST /api/v1/payments/confirm HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "X-User-Id: "
           + QByteArray::number(userId) + "\r\nIdempotency-Key: " + key
           + "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

QByteArray get(const QByteArray &target)
{
    return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

int paymentsOf(const AgentProcess &agent, const QString &orderNo)
{
    const HttpAnswer order = agent.call("GET", QStringLiteral("/api/v1/orders/") + orderNo, {}, kDesk);
    if (order.status != 200)
        return -1;
    return int(order.json().value(QStringLiteral("payments")).toArray().size());
}

} // namespace

// 200 clients each send a whole, valid confirm (fresh Idempotency-Key, the one valid
// token) and leave without reading. The simulator answers WeChat 300 ms late, so the
// clients are gone while the handlers still run. The agent must stay up and valgrind-clean,
// exit 0 on SIGTERM, and the order must have exactly one payment record.
void TestAgentHttp::confirmDisconnectStormUnderValgrind()
{
    const QString log = QDir::tempPath()
                        + QStringLiteral("/payonce-agenthttp-valgrind-%1.log").arg(QCoreApplication::applicationPid());
    AgentProcess::Options options;
    options.valgrind = true;
    options.valgrindLog = log;
    QElapsedTimer startup;
    startup.start();
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
    QString error;
    qInfo("the agent under valgrind was ready after %lld ms", startup.elapsed());

    const HttpAnswer faults = agent->simCall("POST", QStringLiteral("/sim/faults"),
                                             "{\"channel\":\"wechat\",\"latency_ms\":300}");
    QVERIFY2(faults.status == 200, faults.body.constData());
    const QString orderNo = QStringLiteral("ORD-VG-STORM");
    QVERIFY2(agent->createOrder(orderNo, 10086, QStringLiteral("99.00"), QStringLiteral("SKU-VG"), &error),
             qPrintable(error));
    const QString token = agent->issueToken(10086, orderNo);
    QVERIFY(!token.isEmpty());

    QElapsedTimer storm;
    storm.start();
    for (int i = 0; i < 200; ++i) {
        QTcpSocket socket;
        socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(agent->port()));
        QVERIFY2(socket.waitForConnected(30000), qPrintable(socket.errorString()));
        socket.write(confirmRequest(token, orderNo, 10086, "vg-storm-key-" + QByteArray::number(i)));
        QVERIFY(socket.waitForBytesWritten(30000));
        socket.abort(); // gone without reading a byte
    }
    qInfo("200 confirms sent and abandoned in %lld ms", storm.elapsed());

    // The one confirm that took the token finishes in the background; wait for its record.
    QElapsedTimer settle;
    settle.start();
    int payments = 0;
    while (settle.elapsed() < 180000 && (payments = paymentsOf(*agent, orderNo)) < 1)
        QTest::qWait(500);
    qInfo("payment record visible %lld ms after the storm", settle.elapsed());
    // Let the other 199 (refused at the token or lock layer) finish too, then look again.
    QTest::qWait(5000);
    QElapsedTimer answer;
    answer.start();
    const QByteArray health = httpExchange(agent->port(), get("/healthz"), 60000);
    QCOMPARE(httpStatusOf(health), 200);
    qInfo("GET /healthz after the storm answered in %lld ms (under valgrind)", answer.elapsed());
    QCOMPARE(paymentsOf(*agent, orderNo), 1);

    const int exitCode = agent->stop(180000);
    QFile file(log);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(log));
    const QByteArray valgrindLog = file.readAll();
    file.close();
    QVERIFY2(!valgrindLog.contains("Invalid read") && !valgrindLog.contains("Invalid write"),
             valgrindLog.right(6000).constData());
    QVERIFY2(exitCode == 0, qPrintable(QStringLiteral("exit code %1\n").arg(exitCode) + agent->output().right(3000)
                                       + QString::fromUtf8(valgrindLog.right(3000))));
    qInfo("valgrind log: %s", valgrindLog.right(300).constData());
    QFile::remove(log);
}

// 500 connections, one GET /healthz each on keep-alive, then silence: the agent closes all
// of them after http.idle_timeout_ms = 2000, measured from each one's answer.
void TestAgentHttp::idleKeepAliveConnectionsClosed()
{
    // All 500 come from 127.0.0.1: lift the per-address cap (256 by default) above them.
    AgentProcess::Options options;
    options.extraConfig = QJsonObject{
        {QStringLiteral("http"), QJsonObject{{QStringLiteral("idle_timeout_ms"), 2000},
                                             {QStringLiteral("max_connections_per_address"), 1000}}}};
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
    QVERIFY2(agent->output().contains(QStringLiteral("http={idle_timeout_ms=2000 header_timeout_ms=10000 "
                                                     "max_connections=4096 max_connections_per_address=1000")),
             qPrintable(agent->output()));

    const IdleCloseMeasurement m = measureIdleCloses(agent->port(), 500);
    QCOMPARE(m.answered, 500);
    QVERIFY2(m.allClosed, "idle connections still open after 30 s");
    qInfo("agent, 500 idle keep-alive connections (http.idle_timeout_ms 2000): closed %lld to %lld ms after their "
          "answer; the last closed %lld ms after the requests were sent",
          m.firstDelayMs, m.lastDelayMs, m.lastCloseMs);
    QVERIFY(m.firstDelayMs >= 1500); // not before the idle timeout (answers are seen up to ~15 ms late)
    QCOMPARE(httpStatusOf(httpExchange(agent->port(), get("/healthz"))), 200);
    agent.stop();
}

// POST /api/v1/payments/confirm announcing 200 MB, head sent then the body streamed: 413
// payload_too_large, and the agent's resident memory does not grow with the body.
void TestAgentHttp::hugeContentLengthOnConfirmRefusedBeforeBuffering()
{
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, {}), agent.error());
    // Warm up the route (threads, database connections) before measuring.
    for (int i = 0; i < 3; ++i) {
        const QByteArray warm = httpExchange(
            agent->port(),
            confirmRequest(QStringLiteral("nope"), QStringLiteral("ORD-NONE"), 10086, "warm-" + QByteArray::number(i)));
        QVERIFY(httpStatusOf(warm) > 0);
    }
    constexpr qint64 total = 200LL * 1024 * 1024;
    const LargeBodyMeasurement m = streamLargeBody(
        agent->port(), agent->pid(),
        "POST /api/v1/payments/confirm HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "X-User-Id: 10086\r\nIdempotency-Key: huge-1\r\nContent-Length: "
            + QByteArray::number(total) + "\r\n\r\n",
        total);
    const QByteArray &response = m.response;
    qInfo("agent, confirm with Content-Length 200 MB: 413 after %lld ms (%lld KiB of body sent by then); %lld MB sent "
          "before the agent closed at %lld ms; VmRSS %lld -> %lld KiB (+%lld KiB, peak seen %lld KiB), VmHWM %lld -> "
          "%lld KiB",
          m.answeredAfterMs, m.sentWhenAnswered / 1024, m.sent / (1024 * 1024), m.elapsedMs, m.rssBeforeKb,
          m.rssAfterKb, m.rssAfterKb - m.rssBeforeKb, m.rssPeakKb, m.hwmBeforeKb, m.hwmAfterKb);
    QVERIFY(m.rssBeforeKb > 0);
    QCOMPARE(httpStatusOf(response), 413);
    QVERIFY2(httpBodyOf(response).contains("\"code\":\"payload_too_large\""), response.constData());
    QVERIFY2(m.rssAfterKb - m.rssBeforeKb < 16 * 1024, "resident memory grew by 16 MB or more");
    QVERIFY2(m.rssPeakKb - m.rssBeforeKb < 16 * 1024, "resident memory peaked 16 MB or more above the start");
    QVERIFY2(m.hwmAfterKb - m.hwmBeforeKb < 16 * 1024, "peak resident memory grew by 16 MB or more");
    QCOMPARE(httpStatusOf(httpExchange(agent->port(), get("/healthz"))), 200);
    agent.stop();
}

QTEST_GUILESS_MAIN(TestAgentHttp)
#include "tst_agenthttp.moc"
