// The connection guard and HttpServer against real sockets: payonce-http-testserver as a
// child process (valgrind for the disconnect storm), raw HTTP from QTcpSocket.
#include "httptestsupport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTcpSocket>
#include <QTest>

#include <memory>
#include <vector>

using namespace payonce::testsupport;

class TestHttpGuard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void basics_data();
    void basics();
    void disconnectStormUnderValgrind();
    void idleConnectionsClosed();
    void hugeContentLengthRefusedBeforeBuffering();
    void perAddressCap();
    void slowlorisHeaderTimeout();
    void keepAliveSecondRequestChecked();
    void upgradeHeaderDoesNotSwitchTheGuardOff_data();
    void upgradeHeaderDoesNotSwitchTheGuardOff();
    void handlersFinishingAtOnceAreEachAnswered();
    void aDeferredReplyLeavesItsThreadFree();
    void aDeferredHandlerThatNeverAnswersIsAnswered500();
    void aMemoryFirstRouteAnswersWithoutItsLane();
};

namespace {

QByteArray get(const QByteArray &target, const QByteArray &extraHeaders = {})
{
    return "GET " + target + " HTTP/1.1\r\nHost: test\r\n" + extraHeaders + "\r\n";
}

QByteArray post(const QByteArray &target, const QByteArray &body, const QByteArray &extraHeaders = {})
{
    return "POST " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: "
           + QByteArray::number(body.size()) + "\r\n" + extraHeaders + "\r\n" + body;
}

std::unique_ptr<HttpTestServer> startServer(const QStringList &arguments = {})
{
    QString error;
    auto server = HttpTestServer::start({arguments, false, {}}, &error);
    if (!server)
        qWarning().noquote() << error;
    return server;
}

/// Sends request on socket and reads until one whole answer (head and Content-Length body)
/// is in, or the server closes, or 5 s pass.
QByteArray exchangeOn(QTcpSocket &socket, const QByteArray &request)
{
    socket.write(request);
    QByteArray answer;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 5000) {
        const qsizetype headEnd = answer.indexOf("\r\n\r\n");
        if (headEnd >= 0 && answer.size() >= headEnd + 4 + httpHeaderOf(answer, "content-length").toLongLong())
            break;
        if (!socket.waitForReadyRead(100) && socket.state() != QAbstractSocket::ConnectedState)
            break;
        answer += socket.readAll();
    }
    return answer + socket.readAll();
}

/// A request with an Upgrade the server does not do (HTTP/2 over cleartext, as curl
/// --http2 sends it) answered as a plain HTTP/1.1 request on a fresh connection: its status
/// and the still-open socket.
int answeredUpgradeRequest(QTcpSocket &socket, int port, const QByteArray &upgradeHeaders)
{
    socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForConnected(5000))
        return -1;
    return httpStatusOf(exchangeOn(socket, get("/healthz", upgradeHeaders)));
}

} // namespace

void TestHttpGuard::basics_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("bodyContains");

    QTest::newRow("healthz") << get("/healthz") << 200 << QByteArray("\"status\":\"up\"");
    QTest::newRow("readyz") << get("/readyz") << 200 << QByteArray("\"redis\":\"ok\"");
    QTest::newRow("unknown path 404 json") << get("/nope") << 404 << QByteArray("\"code\":\"not_found\"");
    QTest::newRow("wrong method 405") << post("/healthz", "{}") << 405 << QByteArray("\"code\":\"method_not_allowed\"");
    QTest::newRow("path argument") << get("/api/v1/orders/ORD-42") << 200 << QByteArray("\"order_no\":\"ORD-42\"");
    QTest::newRow("echo json") << post("/echo", "{\"a\":1}") << 200 << QByteArray("\"echo\":{\"a\":1}");
    QTest::newRow("traceparent accepted")
        << post("/echo", "{}", "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n") << 200
        << QByteArray("4bf92f3577b34da6a3ce929d0e0e4736");
    QTest::newRow("invalid json 400") << post("/echo", "{nope") << 400 << QByteArray("\"code\":\"invalid_request\"");
    QTest::newRow("invalid utf-8 400") << post("/echo", "{\"a\":\"\xff\xfe\"}") << 400 << QByteArray("UTF-8");
    QTest::newRow("content-length over 64 KiB 413")
        << QByteArray("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 65537\r\n\r\n") << 413
        << QByteArray("\"code\":\"payload_too_large\"");
    QTest::newRow("chunked 411") << QByteArray(
        "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
                                 << 411 << QByteArray("\"code\":\"length_required\"");
    QTest::newRow("malformed request line 400") << QByteArray("HELLO\r\n\r\n") << 400 << QByteArray("invalid_request");
    // The guard's head check, field by field.
    QTest::newRow("request line with a double space 400")
        << QByteArray("GET  /healthz HTTP/1.1\r\nHost: test\r\n\r\n") << 400 << QByteArray("invalid_request");
    QTest::newRow("request line of another protocol 400")
        << QByteArray("GET /healthz SPDY/3\r\nHost: test\r\n\r\n") << 400 << QByteArray("invalid_request");
    QTest::newRow("header line without a colon 400")
        << QByteArray("GET /healthz HTTP/1.1\r\nHost: test\r\nnot a header\r\n\r\n") << 400
        << QByteArray("invalid_request");
    QTest::newRow("two Content-Lengths that differ 400")
        << QByteArray("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\ncontent-length: 3\r\n\r\n{}") << 400
        << QByteArray("invalid_request");
    QTest::newRow("Content-Length not a number 400")
        << QByteArray("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 2x\r\n\r\n{}") << 400
        << QByteArray("invalid_request");
    QTest::newRow("header names in any case, spaces around values")
        << QByteArray("POST /echo HTTP/1.1\r\nHOST: test\r\nCONTENT-TYPE: application/json\r\n"
                      "CONTENT-LENGTH:   7  \r\n\r\n{\"a\":1}")
        << 200 << QByteArray("\"echo\":{\"a\":1}");
    QTest::newRow("chunked in any case 411")
        << QByteArray("POST /echo HTTP/1.1\r\nHost: test\r\nTRANSFER-ENCODING: chunked\r\n\r\n0\r\n\r\n") << 411
        << QByteArray("\"code\":\"length_required\"");
    QTest::newRow("body of exactly 64 KiB accepted")
        << post("/echo", "{\"a\":\"" + QByteArray(65536 - 8, 'x') + "\"}") << 200 << QByteArray("\"echo\"");
}

void TestHttpGuard::basics()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QByteArray, bodyContains);
    static std::unique_ptr<HttpTestServer> server = startServer();
    QVERIFY(server);
    const QByteArray response = httpExchange(server->port(), request);
    QCOMPARE(httpStatusOf(response), status);
    QVERIFY2(httpBodyOf(response).contains(bodyContains), response.left(400).constData());
    const bool answeredByGuard = status == 413 || status == 411
                                 || (status == 400
                                     && !request.startsWith("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Type"));
    if (!answeredByGuard)
        QVERIFY(!httpHeaderOf(response, "x-trace-id").isEmpty());
    if (status >= 400)
        QCOMPARE(httpHeaderOf(response, "content-type"), QByteArray("application/json"));
}

void TestHttpGuard::disconnectStormUnderValgrind()
{
    const QString log = QDir::tempPath()
                        + QStringLiteral("/payonce-httpguard-valgrind-%1.log").arg(QCoreApplication::applicationPid());
    QString error;
    auto server = HttpTestServer::start({{QStringLiteral("--workers"), QStringLiteral("64")}, true, log}, &error);
    QVERIFY2(server, qPrintable(error));

    // 200 clients: half leave right after sending, half once their handler is running.
    std::vector<std::unique_ptr<QTcpSocket>> clients;
    for (int i = 0; i < 200; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
        QVERIFY(socket->waitForConnected(10000));
        socket->write(get("/slow?ms=300"));
        QVERIFY(socket->waitForBytesWritten(10000));
        if (i % 2 == 0)
            socket->abort();
        clients.push_back(std::move(socket));
    }
    QTest::qWait(1500);
    for (auto &socket : clients)
        socket->abort();
    clients.clear();

    // Still up: a request queued behind the storm is answered.
    QElapsedTimer timer;
    timer.start();
    const QByteArray after = httpExchange(server->port(), get("/slow?ms=10"), 60000);
    QCOMPARE(httpStatusOf(after), 200);
    QCOMPARE(httpStatusOf(httpExchange(server->port(), get("/healthz"), 30000)), 200);
    qInfo("after the storm a request was answered in %lld ms (under valgrind)", timer.elapsed());

    const int exitCode = server->terminate(120000);
    QFile file(log);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray valgrindLog = file.readAll();
    file.close();
    QVERIFY2(!valgrindLog.contains("Invalid read") && !valgrindLog.contains("Invalid write"),
             valgrindLog.right(4000).constData());
    QVERIFY2(exitCode == 0, qPrintable(server->output() + QString::fromUtf8(valgrindLog.right(3000))));
    QFile::remove(log);
}

void TestHttpGuard::idleConnectionsClosed()
{
    auto server = startServer(
        {QStringLiteral("--idle-ms"), QStringLiteral("2000"), QStringLiteral("--header-ms"), QStringLiteral("2000")});
    QVERIFY(server);
    const IdleCloseMeasurement m = measureIdleCloses(server->port(), 500);
    QCOMPARE(m.answered, 500);
    QVERIFY2(m.allClosed, "idle connections still open after 30 s");
    qInfo("500 idle keep-alive connections (idle timeout 2000 ms): closed %lld to %lld ms after their answer; "
          "the last %lld ms after the requests were sent",
          m.firstDelayMs, m.lastDelayMs, m.lastCloseMs);
    QVERIFY(m.firstDelayMs >= 1500); // not before the idle timeout (answers are seen up to ~15 ms late)
}

void TestHttpGuard::hugeContentLengthRefusedBeforeBuffering()
{
    auto server = startServer();
    QVERIFY(server);
    QCOMPARE(httpStatusOf(httpExchange(server->port(), get("/healthz"))), 200);
    constexpr qint64 total = 200LL * 1024 * 1024;
    const LargeBodyMeasurement m = streamLargeBody(
        server->port(), server->pid(),
        "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: "
            + QByteArray::number(total) + "\r\n\r\n",
        total);
    qInfo("Content-Length 200 MB: 413 after %lld ms (%lld KiB of body sent by then); %lld MB sent before the server "
          "closed at %lld ms; server VmRSS %lld -> %lld KiB (+%lld KiB), VmHWM %lld -> %lld KiB",
          m.answeredAfterMs, m.sentWhenAnswered / 1024, m.sent / (1024 * 1024), m.elapsedMs, m.rssBeforeKb,
          m.rssAfterKb, m.rssAfterKb - m.rssBeforeKb, m.hwmBeforeKb, m.hwmAfterKb);
    QVERIFY(m.rssBeforeKb > 0);
    QCOMPARE(httpStatusOf(m.response), 413);
    QVERIFY(httpBodyOf(m.response).contains("\"code\":\"payload_too_large\""));
    QVERIFY2(m.rssAfterKb - m.rssBeforeKb < 16 * 1024, "resident memory grew by 16 MB or more");
    QVERIFY2(m.hwmAfterKb - m.hwmBeforeKb < 16 * 1024, "peak resident memory grew by 16 MB or more");
    // And the server still serves.
    QCOMPARE(httpStatusOf(httpExchange(server->port(), get("/healthz"))), 200);
}

void TestHttpGuard::perAddressCap()
{
    auto server = startServer({QStringLiteral("--per-address"), QStringLiteral("5")});
    QVERIFY(server);
    std::vector<std::unique_ptr<QTcpSocket>> held;
    for (int i = 0; i < 5; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
        QVERIFY(socket->waitForConnected(5000));
        held.push_back(std::move(socket));
    }
    QTest::qWait(200);
    const QByteArray refused = httpExchange(server->port(), get("/healthz"));
    QCOMPARE(httpStatusOf(refused), 503);
    QVERIFY(httpBodyOf(refused).contains("\"code\":\"too_many_connections\""));
    // One of the five leaves: room again.
    held.front()->disconnectFromHost();
    held.erase(held.begin());
    QTest::qWait(300);
    QCOMPARE(httpStatusOf(httpExchange(server->port(), get("/healthz"))), 200);
    QCOMPARE(server->terminate(), 0);
    QVERIFY2(server->output().contains(QStringLiteral("per-address refused 1")), qPrintable(server->output()));
}

void TestHttpGuard::slowlorisHeaderTimeout()
{
    auto server = startServer({QStringLiteral("--header-ms"), QStringLiteral("1000")});
    QVERIFY(server);
    QTcpSocket socket;
    socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
    QVERIFY(socket.waitForConnected(5000));
    QElapsedTimer timer;
    timer.start();
    socket.write("GET /healthz HTTP/1.1\r\n");
    int lines = 0;
    while (socket.state() == QAbstractSocket::ConnectedState && timer.elapsed() < 10000) {
        socket.write("X-Slow-" + QByteArray::number(lines++) + ": a\r\n");
        socket.waitForDisconnected(300);
    }
    const qint64 closedAfter = timer.elapsed();
    qInfo("slowloris (a header line every 300 ms, header timeout 1000 ms): closed after %lld ms, %d lines", closedAfter,
          lines);
    QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    QVERIFY(closedAfter >= 900);
    QVERIFY(closedAfter < 4000);
    QVERIFY(socket.readAll().isEmpty()); // never answered
}

void TestHttpGuard::keepAliveSecondRequestChecked()
{
    auto server = startServer();
    QVERIFY(server);
    QTcpSocket socket;
    socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
    QVERIFY(socket.waitForConnected(5000));
    socket.write(post("/echo", "{\"n\":1}"));
    QByteArray first;
    while (!first.contains("}}") && socket.waitForReadyRead(5000))
        first += socket.readAll();
    QCOMPARE(httpStatusOf(first), 200);
    // The same connection, a second request over the limit: refused by the guard too.
    socket.write("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000\r\n\r\n");
    QByteArray second;
    while (!second.contains("}}") && socket.waitForReadyRead(5000))
        second += socket.readAll();
    QCOMPARE(httpStatusOf(second), 413);
}

void TestHttpGuard::upgradeHeaderDoesNotSwitchTheGuardOff_data()
{
    QTest::addColumn<QByteArray>("upgradeHeaders");
    QTest::newRow("h2c") << QByteArray("Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                                       "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n");
    QTest::newRow("upgrade header alone") << QByteArray("Upgrade: anything/1.0\r\n");
}

// Only a WebSocket handshake the server accepted ends the guard's framing. Any other
// request naming an Upgrade is answered as HTTP/1.1 and its connection stays guarded: a
// body over the limit is 413 before it is read, chunked bodies are 411, and an idle
// connection is closed.
void TestHttpGuard::upgradeHeaderDoesNotSwitchTheGuardOff()
{
    QFETCH(QByteArray, upgradeHeaders);
    auto server = startServer({QStringLiteral("--idle-ms"), QStringLiteral("2000")});
    QVERIFY(server);

    // 50 MB announced after the upgrade request, on the same connection.
    {
        QTcpSocket socket;
        QCOMPARE(answeredUpgradeRequest(socket, server->port(), upgradeHeaders), 200);
        QVERIFY(socket.state() == QAbstractSocket::ConnectedState);
        constexpr qint64 total = 50LL * 1024 * 1024;
        const qint64 rssBefore = procStatusKb(server->pid(), "VmRSS");
        socket.write("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: "
                     + QByteArray::number(total) + "\r\n\r\n");
        const QByteArray chunk(256 * 1024, 'x');
        QByteArray response;
        qint64 sent = 0;
        qint64 sentWhenAnswered = -1;
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 30000 && socket.state() == QAbstractSocket::ConnectedState) {
            if (sent < total && socket.bytesToWrite() < 2 * chunk.size()) {
                socket.write(chunk);
                sent += chunk.size();
            }
            socket.waitForBytesWritten(5);
            response += socket.readAll();
            if (sentWhenAnswered < 0 && response.contains("}}"))
                sentWhenAnswered = sent;
            if (sent >= total && !socket.waitForReadyRead(100))
                break;
        }
        response += socket.readAll();
        const qint64 rssAfter = procStatusKb(server->pid(), "VmRSS");
        qInfo(
            "after the upgrade request: %lld KiB of a 50 MB body sent when answered %d; server VmRSS %lld -> %lld KiB",
            sentWhenAnswered / 1024, httpStatusOf(response), rssBefore, rssAfter);
        QVERIFY2(httpStatusOf(response) == 413, response.left(300).constData());
        QVERIFY(httpBodyOf(response).contains("\"code\":\"payload_too_large\""));
        QVERIFY2(rssAfter - rssBefore < 16 * 1024, "resident memory grew by 16 MB or more: the body was read");
    }
    // A chunked body after it: 411, as on any connection.
    {
        QTcpSocket socket;
        QCOMPARE(answeredUpgradeRequest(socket, server->port(), upgradeHeaders), 200);
        const QByteArray chunked = exchangeOn(
            socket, "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
        QVERIFY2(httpStatusOf(chunked) == 411, chunked.left(300).constData());
    }
    // Silent after it: closed by the idle timeout (2 s here).
    {
        QTcpSocket socket;
        QCOMPARE(answeredUpgradeRequest(socket, server->port(), upgradeHeaders), 200);
        QElapsedTimer timer;
        timer.start();
        while (socket.state() == QAbstractSocket::ConnectedState && timer.elapsed() < 10000) {
            socket.waitForReadyRead(100);
            socket.readAll();
        }
        qInfo("silent after the upgrade request: closed after %lld ms", timer.elapsed());
        QVERIFY2(socket.state() != QAbstractSocket::ConnectedState, "still open 10 s after its answer");
    }
    // And the server still serves.
    QCOMPARE(httpStatusOf(httpExchange(server->port(), get("/healthz"))), 200);
}

// Handlers that finish within microseconds of being handed to the pool, on several keep-alive
// connections at once: the reply is posted back to the event loop while the loop may still
// be finishing the hand-over. Every request gets exactly its answer and the server lives.
// (Seen: the agent died with SIGSEGV in QFuture's continuation under a metrics scrape load.)
void TestHttpGuard::handlersFinishingAtOnceAreEachAnswered()
{
    // 20 000 access-log lines would fill the pipe nobody reads while this loop runs.
    qputenv("QT_LOGGING_RULES", "payonce.agent.access=false");
    auto server = startServer({QStringLiteral("--workers"), QStringLiteral("4")});
    qunsetenv("QT_LOGGING_RULES");
    QVERIFY(server);
    constexpr int kClients = 4;
    constexpr int kRounds = 5000;
    std::vector<std::unique_ptr<QTcpSocket>> clients;
    for (int c = 0; c < kClients; ++c) {
        clients.push_back(std::make_unique<QTcpSocket>());
        clients.back()->connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
        QVERIFY(clients.back()->waitForConnected(10000));
    }
    int answered = 0;
    for (int round = 0; round < kRounds && server->isRunning(); ++round) {
        // One request in flight on every connection, then every answer read.
        const QByteArray request = get("/spin?us=" + QByteArray::number(1 + round % 8));
        for (auto &socket : clients) {
            socket->write(request);
            socket->flush();
        }
        for (auto &socket : clients) {
            const QByteArray answer = exchangeOn(*socket, {});
            if (httpStatusOf(answer) == 200 && answer.contains("spun_us_at_most"))
                ++answered;
        }
    }
    QVERIFY2(server->isRunning(), qPrintable(server->output().right(3000)));
    QCOMPARE(answered, kClients * kRounds);
    QCOMPARE(server->terminate(), 0);
}

void TestHttpGuard::aDeferredReplyLeavesItsThreadFree()
{
    // One thread on the callback lane: a request whose reply is deferred must not hold it.
    auto server = startServer({QStringLiteral("--callback-threads"), QStringLiteral("1")});
    QVERIFY(server);
    QTcpSocket deferred, quick;
    for (QTcpSocket *socket : {&deferred, &quick}) {
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
        QVERIFY(socket->waitForConnected(5000));
    }
    deferred.write(get("/deferred?ms=2000"));
    deferred.flush();
    QTest::qWait(200); // first on the lane (the other order proves the same); its reply is 1.8 s away
    const QByteArray quickAnswer = exchangeOn(quick, get("/callback-lane"));
    QCOMPARE(httpStatusOf(quickAnswer), 200);
    QVERIFY(deferred.bytesAvailable() == 0 && !deferred.waitForReadyRead(0)); // still waiting for its reply
    const QByteArray deferredAnswer = exchangeOn(deferred, {});
    QCOMPARE(httpStatusOf(deferredAnswer), 200);
    QVERIFY2(httpBodyOf(deferredAnswer).contains("\"deferred_ms\":2000"), deferredAnswer.constData());
    QVERIFY(!httpHeaderOf(deferredAnswer, "x-trace-id").isEmpty());
    // The connection stays usable after a deferred reply.
    QCOMPARE(httpStatusOf(exchangeOn(deferred, get("/callback-lane"))), 200);
    QCOMPARE(server->terminate(), 0);
}

void TestHttpGuard::aDeferredHandlerThatNeverAnswersIsAnswered500()
{
    auto server = startServer();
    QVERIFY(server);
    const QByteArray response = httpExchange(server->port(), get("/deferred-lost"));
    QCOMPARE(httpStatusOf(response), 500);
    QVERIFY2(httpBodyOf(response).contains("\"code\":\"internal\""), response.constData());
    QCOMPARE(server->terminate(), 0);
}

void TestHttpGuard::aMemoryFirstRouteAnswersWithoutItsLane()
{
    // One thread on the callback lane and no queue: what the memory-first try takes is
    // answered while that thread is held (a request that needed the lane would be 503);
    // what it declines needs the lane.
    auto server = startServer({QStringLiteral("--callback-threads"), QStringLiteral("1"),
                               QStringLiteral("--callback-queue"), QStringLiteral("0")});
    QVERIFY(server);
    QTcpSocket holder, other;
    for (QTcpSocket *socket : {&holder, &other}) {
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(server->port()));
        QVERIFY(socket->waitForConnected(5000));
    }
    holder.write(get("/memory-first?ms=3000")); // declined: the lane's one thread, for 3 s
    holder.flush();
    // Declined requests until the lane is seen full (no sleep guessing when the holder got
    // its thread): its busy reply, through the same sink, with the route's layer and
    // Retry-After as the server's own replies have. Before that, one answers from the lane.
    QByteArray busy;
    QElapsedTimer waited;
    waited.start();
    do {
        busy = exchangeOn(other, get("/memory-first?ms=0"));
    } while (httpStatusOf(busy) == 200 && waited.elapsed() < 2500);
    QCOMPARE(httpStatusOf(busy), 503);
    QVERIFY2(httpBodyOf(busy).contains("\"code\":\"server_busy\""), busy.constData());
    QCOMPARE(httpHeaderOf(busy, "retry-after"), QByteArray("1"));
    QCOMPARE(httpHeaderOf(busy, "x-payonce-layer"), QByteArray("rejected"));

    // While that thread is held, a request the memory-first try takes is answered.
    const QByteArray fromMemory = exchangeOn(other, get("/memory-first?from=memory"));
    QCOMPARE(httpStatusOf(fromMemory), 200);
    QVERIFY2(httpBodyOf(fromMemory).contains("\"answered_by\":\"memory\""), fromMemory.constData());
    QVERIFY(!httpHeaderOf(fromMemory, "x-trace-id").isEmpty());
    QVERIFY(holder.bytesAvailable() == 0 && !holder.waitForReadyRead(0)); // the lane's thread still held

    // A memory-first try that throws is answered 500, and the connection goes on.
    const QByteArray thrown = exchangeOn(other, get("/memory-first?from=throw"));
    QCOMPARE(httpStatusOf(thrown), 500);
    QVERIFY2(httpBodyOf(thrown).contains("\"code\":\"internal\""), thrown.constData());

    const QByteArray laneAnswer = exchangeOn(holder, {});
    QCOMPARE(httpStatusOf(laneAnswer), 200);
    QVERIFY2(httpBodyOf(laneAnswer).contains("\"answered_by\":\"lane\""), laneAnswer.constData());
    // The lane free again, a declined request is the lane's.
    const QByteArray declined = exchangeOn(other, get("/memory-first?ms=0"));
    QCOMPARE(httpStatusOf(declined), 200);
    QVERIFY2(httpBodyOf(declined).contains("\"answered_by\":\"lane\""), declined.constData());
    QCOMPARE(server->terminate(), 0);
}

QTEST_GUILESS_MAIN(TestHttpGuard)
#include "tst_httpguard.moc"
