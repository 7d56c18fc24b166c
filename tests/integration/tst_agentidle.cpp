// The idle timeout of the agent's connections must never race a request: a keep-alive
// connection whose next request has arrived — in the kernel's buffer or in Qt's — is not
// idle, however long the agent took to look at it. The agent's event loop is held up past
// the idle timeout (SIGSTOP, as a loaded machine or a stall would) while clients send
// their next request; once it runs again every request must be answered, and only the
// connection that really stayed silent is closed.

#include "agentfixture.h"
#include "storagefixture.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QTcpSocket>
#include <QTest>

#include <csignal>
#include <memory>
#include <vector>

using namespace payonce::testsupport;

namespace {

constexpr int kIdleTimeoutMs = 300;
constexpr int kClients = 24;

const QByteArray kRequest = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// Reads one answer (head and Content-Length body) off socket: its status, or -1 when the
/// connection closed (or nothing came) first.
int readAnswer(QTcpSocket &socket, int timeoutMs)
{
    QByteArray in;
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        const qsizetype headEnd = in.indexOf("\r\n\r\n");
        if (headEnd >= 0) {
            qsizetype length = 0;
            for (const QByteArray &line : in.left(headEnd).split('\n')) {
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            }
            if (in.size() >= headEnd + 4 + length)
                return in.mid(9, 3).toInt();
        }
        if (socket.state() != QAbstractSocket::ConnectedState || waited.elapsed() > timeoutMs)
            return -1;
        socket.waitForReadyRead(50);
        in += socket.readAll();
    }
}

} // namespace

class TestAgentIdle : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void requestsArrivingDuringAStallPastTheIdleTimeoutAreAnswered();
    void firstRequestIsTimedByTheHeaderTimeout();
};

void TestAgentIdle::requestsArrivingDuringAStallPastTheIdleTimeoutAreAnswered()
{
    AgentProcess::Options options;
    options.sim = false;
    options.extraConfig = QJsonObject{
        {QStringLiteral("http"), QJsonObject{{QStringLiteral("idle_timeout_ms"), kIdleTimeoutMs}}}};
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());

    // Keep-alive connections that have had one answer each, and one that will stay silent.
    std::vector<std::unique_ptr<QTcpSocket>> clients;
    for (int i = 0; i < kClients + 1; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(agent->port()));
        QVERIFY(socket->waitForConnected(5000));
        socket->write(kRequest);
        QCOMPARE(readAnswer(*socket, 5000), 200);
        clients.push_back(std::move(socket));
    }
    QTcpSocket &silent = *clients.back();

    // The agent stops running; the clients send their next request well inside the idle
    // timeout (counted from their last answer), and the agent runs again only after it.
    QVERIFY(agent->sendSignal(SIGSTOP));
    for (int i = 0; i < kClients; ++i) {
        clients[std::size_t(i)]->write(kRequest);
        QVERIFY(clients[std::size_t(i)]->waitForBytesWritten(1000));
    }
    QTest::qWait(3 * kIdleTimeoutMs);
    QVERIFY(agent->sendSignal(SIGCONT));

    int answered = 0;
    QStringList dropped;
    for (int i = 0; i < kClients; ++i) {
        const int status = readAnswer(*clients[std::size_t(i)], 10000);
        if (status == 200)
            ++answered;
        else
            dropped << QString::number(i);
    }
    QVERIFY2(answered == kClients,
             qPrintable(QStringLiteral("%1 of %2 answered; closed with the request unanswered: %3")
                            .arg(answered)
                            .arg(kClients)
                            .arg(dropped.join(u' '))));
    // The idle timeout still closes what really is idle.
    QTRY_VERIFY_WITH_TIMEOUT(silent.state() != QAbstractSocket::ConnectedState
                                 || (silent.waitForReadyRead(10), silent.state() != QAbstractSocket::ConnectedState),
                             5000);
    agent.stop();
}

// Idle is the time after an answer (keep-alive). Before its first request a connection is
// timed by the header timeout, from its start, as nginx's client_header_timeout does: a
// burst of connections the agent accepts in turn, whose requests are written once all are
// connected, must not lose the first ones to the (shorter) idle timeout. One that never
// sends is still closed, at the header timeout.
void TestAgentIdle::firstRequestIsTimedByTheHeaderTimeout()
{
    constexpr int kHeaderTimeoutMs = 3000;
    AgentProcess::Options options;
    options.sim = false;
    options.extraConfig = QJsonObject{
        {QStringLiteral("http"), QJsonObject{{QStringLiteral("idle_timeout_ms"), kIdleTimeoutMs},
                                             {QStringLiteral("header_timeout_ms"), kHeaderTimeoutMs}}}};
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());

    QTcpSocket late;
    QTcpSocket silent;
    for (QTcpSocket *socket : {&late, &silent}) {
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(agent->port()));
        QVERIFY(socket->waitForConnected(5000));
    }
    QElapsedTimer connected;
    connected.start();
    QTest::qWait(4 * kIdleTimeoutMs);

    late.write(kRequest);
    QCOMPARE(readAnswer(late, 5000), 200);
    silent.waitForReadyRead(10);
    QVERIFY2(silent.state() == QAbstractSocket::ConnectedState,
             "a connection that has not sent its first request was closed by the idle timeout");
    // The header timeout still closes a connection that never sends a request.
    QTRY_VERIFY_WITH_TIMEOUT((silent.waitForReadyRead(10), silent.state() != QAbstractSocket::ConnectedState),
                             3 * kHeaderTimeoutMs);
    QVERIFY2(connected.elapsed() >= kHeaderTimeoutMs - 200,
             qPrintable(QStringLiteral("closed %1 ms after connecting").arg(connected.elapsed())));
    agent.stop();
}

QTEST_MAIN(TestAgentIdle)
#include "tst_agentidle.moc"
