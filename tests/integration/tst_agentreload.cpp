// The real agent binary reloading its configuration on SIGHUP, and capping the live
// streams one token may hold: an operator revokes a token by editing the config file and
// sending SIGHUP — the new token works at once, the removed one is refused and its open
// stream is closed, a broken file changes nothing (the agent keeps serving on the running
// configuration and says why) — and one token cannot open streams without end.

#include "agentconfig.h"
#include "agentfixture.h"
#include "storagefixture.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkRequest>
#include <QTest>
#include <QWebSocket>

#include <csignal>
#include <memory>

using namespace payonce::testsupport;

namespace {

/// One live-stream client: counts the messages it got, remembers how it was closed.
struct StreamClient {
    QWebSocket socket;
    int messages = 0;
    bool closed = false;

    void open(int port, const QByteArray &token)
    {
        QObject::connect(&socket, &QWebSocket::textMessageReceived, [this](const QString &) { ++messages; });
        QObject::connect(&socket, &QWebSocket::disconnected, [this] { closed = true; });
        QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/stream").arg(port)));
        request.setRawHeader("Authorization", "Bearer " + token);
        socket.open(request);
    }
};

int statusWith(const AgentProcess &agent, const QByteArray &token)
{
    return agent.call("GET", QStringLiteral("/api/v1/breakers"), {}, {{"Authorization", "Bearer " + token}}).status;
}

bool writeConfig(const QString &path, const QByteArray &contents)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(contents) == contents.size();
}

/// The agent's config with auth.tokens replaced.
QByteArray withTokens(QJsonObject config, const QJsonArray &tokens)
{
    config.insert(QStringLiteral("auth"), QJsonObject{{QStringLiteral("tokens"), tokens}});
    return QJsonDocument(config).toJson();
}

/// The status line of a WebSocket handshake with `Authorization: Bearer token`.
QByteArray handshakeStatus(int port, const QByteArray &token)
{
    const HttpAnswer answer = httpCall(port, "GET", QStringLiteral("/api/v1/stream"), {},
                                       {{"Authorization", "Bearer " + token},
                                        {"Connection", "Upgrade"},
                                        {"Upgrade", "websocket"},
                                        {"Sec-WebSocket-Version", "13"},
                                        {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
    return QByteArray::number(answer.status) + ' ' + answer.errorCode().toUtf8();
}

} // namespace

class TestAgentReload : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_fixture.startDatabase(Dialect::Sqlite), m_fixture.error()); }

    void sighupAppliesNewTokensAndClosesTheRemovedTokensStreams();
    void sighupWithABrokenConfigKeepsTheRunningOne_data();
    void sighupWithABrokenConfigKeepsTheRunningOne();
    void streamsPerTokenAreCapped();

private:
    std::unique_ptr<AgentProcess> startAgent(const QJsonObject &extraConfig = {})
    {
        AgentProcess::Options options;
        options.sim = false;
        options.extraConfig = extraConfig;
        return m_fixture.startAnother(options);
    }

    AgentFixture m_fixture; ///< the database; each test starts its own agent on it
};

void TestAgentReload::sighupAppliesNewTokensAndClosesTheRemovedTokensStreams()
{
    auto agent = startAgent(QJsonObject{streamEvery(50)});
    QVERIFY(agent);
    QCOMPARE(statusWith(*agent, "view-token"), 200);
    QCOMPARE(statusWith(*agent, "fresh-token"), 401);

    StreamClient revoked; // the viewer's: its token goes
    StreamClient kept;    // the desk's: its token stays
    revoked.open(agent->port(), "view-token");
    kept.open(agent->port(), "desk-token");
    QTRY_VERIFY_WITH_TIMEOUT(revoked.messages >= 2 && kept.messages >= 2, 15000);

    // "view" is removed, "fresh" added, "desk" and "lead" stay.
    const QJsonArray tokens{tokenEntry(QStringLiteral("desk"), QStringLiteral("operator"), "desk-token"),
                            tokenEntry(QStringLiteral("lead"), QStringLiteral("approver"), "lead-token"),
                            tokenEntry(QStringLiteral("fresh"), QStringLiteral("viewer"), "fresh-token")};
    // A setting that cannot change live is changed too: named, left for the restart.
    QJsonObject changed = agent->config();
    changed.insert(QStringLiteral("http"), QJsonObject{{QStringLiteral("idle_timeout_ms"), 30000}});
    QVERIFY(writeConfig(agent->configPath(), withTokens(changed, tokens)));
    QVERIFY(agent->sendSignal(SIGHUP));
    QVERIFY2(agent->waitForOutput("configuration reloaded", 15000), qPrintable(agent->output()));
    QVERIFY2(agent->waitForOutput("applied only at the next start: http", 5000), qPrintable(agent->output()));
    QVERIFY2(agent->output().contains(u"added fresh; removed view"), qPrintable(agent->output()));

    QVERIFY2(agent->running(), qPrintable(agent->output()));
    QCOMPARE(statusWith(*agent, "fresh-token"), 200);
    QCOMPARE(statusWith(*agent, "view-token"), 401);
    QCOMPARE(statusWith(*agent, "desk-token"), 200);
    // The revoked token's stream is closed by the agent, as a policy violation.
    QTRY_VERIFY_WITH_TIMEOUT(revoked.closed, 10000);
    QCOMPARE(revoked.socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    // The kept token's stream goes on.
    const int keptBefore = kept.messages;
    QTRY_VERIFY_WITH_TIMEOUT(kept.messages >= keptBefore + 3, 10000);
    QVERIFY(!kept.closed);
    // A new stream with the removed token is refused at the handshake; the new one opens.
    QCOMPARE(handshakeStatus(agent->port(), "view-token"), QByteArray("401 unauthenticated"));
    StreamClient fresh;
    fresh.open(agent->port(), "fresh-token");
    QTRY_VERIFY_WITH_TIMEOUT(fresh.messages >= 2, 15000);
    QCOMPARE(agent->stop(), 0);
}

void TestAgentReload::sighupWithABrokenConfigKeepsTheRunningOne_data()
{
    // tokens: what auth.tokens becomes in the otherwise unchanged file; null: the file is
    // cut off in the middle instead (not JSON).
    QTest::addColumn<QJsonValue>("tokens");
    QTest::newRow("not JSON") << QJsonValue();
    QTest::newRow("a token with an unknown role")
        << QJsonValue(QJsonArray{tokenEntry(QStringLiteral("fresh"), QStringLiteral("root"), "fresh-token")});
    QTest::newRow("the example config's token") << QJsonValue(
        QJsonArray{tokenEntry(QStringLiteral("fresh"), QStringLiteral("viewer"), "fresh-token"),
                   tokenEntry(QStringLiteral("desk2"), QStringLiteral("operator"), "example-desk-token")});
    QTest::newRow("two names a person cannot tell apart")
        << QJsonValue(QJsonArray{tokenEntry(QStringLiteral("fresh"), QStringLiteral("viewer"), "fresh-token"),
                                 tokenEntry(QStringLiteral("Fresh"), QStringLiteral("approver"), "other-token")});
}

void TestAgentReload::sighupWithABrokenConfigKeepsTheRunningOne()
{
    QFETCH(QJsonValue, tokens);
    auto agent = startAgent();
    QVERIFY(agent);
    StreamClient stream;
    stream.open(agent->port(), "view-token");
    QTRY_VERIFY_WITH_TIMEOUT(stream.messages >= 1, 15000);

    const QByteArray written = tokens.isNull() ? QByteArray("{\"auth\": {\"tokens\": [")
                                               : withTokens(agent->config(), tokens.toArray());
    QVERIFY(writeConfig(agent->configPath(), written));
    QVERIFY(agent->sendSignal(SIGHUP));
    QVERIFY2(agent->waitForOutput("reload refused", 15000), qPrintable(agent->output()));
    QVERIFY2(agent->running(), qPrintable(agent->output()));
    QCOMPARE(statusWith(*agent, "view-token"), 200);
    QCOMPARE(statusWith(*agent, "desk-token"), 200);
    QCOMPARE(statusWith(*agent, "fresh-token"), 401);
    QTest::qWait(300);
    QVERIFY(!stream.closed);

    // Mended, the next SIGHUP applies it.
    QVERIFY(writeConfig(agent->configPath(),
                        withTokens(agent->config(), QJsonArray{tokenEntry(QStringLiteral("fresh"),
                                                                          QStringLiteral("viewer"), "fresh-token")})));
    QVERIFY(agent->sendSignal(SIGHUP));
    QVERIFY2(agent->waitForOutput("configuration reloaded", 15000), qPrintable(agent->output()));
    QCOMPARE(statusWith(*agent, "fresh-token"), 200);
    QCOMPARE(statusWith(*agent, "view-token"), 401);
    QTRY_VERIFY_WITH_TIMEOUT(stream.closed, 10000);
    QCOMPARE(agent->stop(), 0);
}

void TestAgentReload::streamsPerTokenAreCapped()
{
    auto agent = startAgent(QJsonObject{{QStringLiteral("stream"), QJsonObject{{QStringLiteral("max_per_token"), 2}}}});
    QVERIFY(agent);
    StreamClient first, second;
    first.open(agent->port(), "view-token");
    second.open(agent->port(), "view-token");
    QTRY_VERIFY_WITH_TIMEOUT(first.messages >= 1 && second.messages >= 1, 15000);

    // The third of the same token is refused at the handshake, and counted.
    QCOMPARE(handshakeStatus(agent->port(), "view-token"), QByteArray("429 too_many_streams"));
    const auto samples = parseMetricSamples(agent->call("GET", QStringLiteral("/metrics")).body);
    QCOMPARE(samples.count(QStringLiteral("payonce_stream_refused_total{reason=\"per_token_cap\"}")), std::size_t(1));
    QCOMPARE(samples.at(QStringLiteral("payonce_stream_refused_total{reason=\"per_token_cap\"}")), 1.0);
    // Another token is not held back by it.
    StreamClient desk;
    desk.open(agent->port(), "desk-token");
    QTRY_VERIFY_WITH_TIMEOUT(desk.messages >= 1, 15000);

    // Once one of the two has closed, the token may open another (the agent counts the
    // close once it has seen it: a refused try is retried).
    first.socket.close();
    QTRY_VERIFY_WITH_TIMEOUT(first.closed, 10000);
    std::unique_ptr<StreamClient> third;
    for (int attempt = 0; attempt < 20 && !(third && third->messages >= 1); ++attempt) {
        third = std::make_unique<StreamClient>();
        third->open(agent->port(), "view-token");
        QTRY_VERIFY_WITH_TIMEOUT(third->messages >= 1 || third->closed, 10000);
        if (third->closed)
            QTest::qWait(200);
    }
    QVERIFY(third && third->messages >= 1);
    QVERIFY(!second.closed);
    QCOMPARE(agent->stop(), 0);
}

QTEST_MAIN(TestAgentReload)
#include "tst_agentreload.moc"
