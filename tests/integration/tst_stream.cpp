// GET /api/v1/stream on the real agent (with payonce-sim beside it), on each dialect:
// refused at the upgrade without a valid token; a snapshot first, then metrics with seq
// 1, 2, 3, …; the per-layer duplicate counts it shows move by exactly what a storm of
// duplicate notifications recorded in callback_deliveries, and agree with GET /metrics;
// a forced breaker and a callback-mode change arrive as events with actor and reason; a
// client that never reads is coalesced or dropped while the agent keeps answering and
// its memory stays bounded. The agent runs with stream.interval_ms = 5 (a test-only
// interval; 250 ms by default) so 10 000 ticks take about a minute, not 40.

#include "agentconfig.h"
#include "agentfixture.h"
#include "storagefixture.h"

#include "shared/streammessage.h"

#include <QFile>
#include <QJsonDocument>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>

#include <map>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr int kIntervalMs = 5;
constexpr int kTicks = 10000;
constexpr qint64 kRssGrowthBoundKiB = 16
                                      * 1024; // the slow client may cost the agent at most this (measured: about 1 MiB)

using Samples = std::map<QString, double>;

QString layerKey(Layer layer)
{
    return QStringLiteral("payonce_duplicates_total{layer=\"%1\"}").arg(layerName(layer));
}

/// VmRSS of a process in KiB, -1 when unreadable.
qint64 rssKiB(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

/// The opening handshake written by hand, so a test controls the socket under it.
QByteArray upgradeRequest(int port, const QByteArray &target, const QByteArray &authorization)
{
    quint32 key[4];
    QRandomGenerator::global()->fillRange(key);
    QByteArray out =
        "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port)
        + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
        + QByteArray(reinterpret_cast<const char *>(key), sizeof key).toBase64() + "\r\n";
    if (!authorization.isEmpty())
        out += "Authorization: " + authorization + "\r\n";
    return out + "\r\n";
}

/// A well-behaved client: decodes every message as it arrives.
class StreamClient : public QObject {
public:
    QList<StreamMessage> messages;
    QStringList errors;

    StreamClient(int port, const QByteArray &token)
    {
        connect(&m_socket, &QWebSocket::textMessageReceived, this, [this](const QString &text) {
            QString error;
            auto decoded = decodeStreamMessage(text.toUtf8(), &error);
            if (!decoded)
                errors << error;
            else
                messages.append(*decoded);
        });
        QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/stream").arg(port)));
        request.setRawHeader("Authorization", "Bearer " + token);
        m_socket.open(request);
    }
    const StreamMetrics *latestMetrics() const
    {
        for (auto it = messages.crbegin(); it != messages.crend(); ++it) {
            if (const auto *m = std::get_if<StreamMetrics>(&it->body))
                return m;
        }
        return nullptr;
    }
    /// A copy of the latest metrics (empty before the first): what a test compares.
    StreamMetrics latest() const
    {
        const StreamMetrics *m = latestMetrics();
        return m ? *m : StreamMetrics{};
    }
    qint64 lastSeq() const { return messages.isEmpty() ? 0 : messages.last().seq; }
    QList<StreamEvent> events() const
    {
        QList<StreamEvent> out;
        for (const StreamMessage &m : messages) {
            if (const auto *e = std::get_if<StreamEvent>(&m.body))
                out << *e;
        }
        return out;
    }
    /// The events of one kind about one subject, in arrival order.
    QList<StreamEvent> events(const QString &kind, const QString &subject) const
    {
        QList<StreamEvent> out;
        for (const StreamEvent &e : events()) {
            if (e.kind == kind && e.subject == subject)
                out << e;
        }
        return out;
    }

private:
    QWebSocket m_socket;
};

} // namespace

class TestStream : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        AgentProcess::Options options;
        // No patrol timer: the findings and compensations the stream shows are the tests' own.
        options.extraConfig = QJsonObject{streamEvery(kIntervalMs), noPatrolTimer()};
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    // The refusal is the HTTP answer to the handshake itself: no 101, no WebSocket.
    void upgradeNeedsAValidToken_data()
    {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("authorization");
        QTest::addColumn<QByteArray>("statusLine");
        QTest::newRow("no token") << QByteArray("/api/v1/stream") << QByteArray() << QByteArray("HTTP/1.1 401");
        QTest::newRow("unknown token") << QByteArray("/api/v1/stream") << QByteArray("Bearer nobody-token")
                                       << QByteArray("HTTP/1.1 401");
        QTest::newRow("unknown query token")
            << QByteArray("/api/v1/stream?access_token=nobody-token") << QByteArray() << QByteArray("HTTP/1.1 401");
        QTest::newRow("other path") << QByteArray("/api/v1/streams") << QByteArray("Bearer view-token")
                                    << QByteArray("HTTP/1.1 404");
        // The token goes in the header only: a query's token would land in every log that
        // writes request lines (proxies, the browser's history), so a valid one is refused too.
        QTest::newRow("viewer in the query")
            << QByteArray("/api/v1/stream?access_token=view-token") << QByteArray() << QByteArray("HTTP/1.1 401");
        QTest::newRow("viewer in the header")
            << QByteArray("/api/v1/stream") << QByteArray("Bearer view-token") << QByteArray("HTTP/1.1 101");
        QTest::newRow("operator in the header")
            << QByteArray("/api/v1/stream") << QByteArray("Bearer desk-token") << QByteArray("HTTP/1.1 101");
    }
    void upgradeNeedsAValidToken()
    {
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, authorization);
        QFETCH(QByteArray, statusLine);
        QTcpSocket socket;
        socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(m_agent->port()));
        QVERIFY(socket.waitForConnected(10000));
        socket.write(upgradeRequest(m_agent->port(), target, authorization));
        QByteArray head;
        while (!head.contains("\r\n\r\n") && socket.waitForReadyRead(10000))
            head += socket.readAll();
        QVERIFY2(head.startsWith(statusLine), head.constData());
        if (statusLine.endsWith("101"))
            return;
        QVERIFY2(!head.contains(" 101 "), head.constData());
        // The server closes a refused upgrade.
        while (socket.state() == QAbstractSocket::ConnectedState && socket.waitForReadyRead(10000))
            socket.readAll();
        QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    }

    void plainGetIsToldToUpgrade()
    {
        const HttpAnswer answer = m_agent->call("GET", QStringLiteral("/api/v1/stream"), {}, kView);
        QCOMPARE(answer.status, 426);
        QCOMPARE(answer.errorCode(), QStringLiteral("upgrade_required"));
    }

    void snapshotFirstThenMetricsInSequence()
    {
        StreamClient client(m_agent->port(), kViewToken);
        QTRY_VERIFY_WITH_TIMEOUT(client.messages.size() >= 50, 30000);
        QVERIFY2(client.errors.isEmpty(), qPrintable(client.errors.join(u'\n')));
        const auto *snapshot = std::get_if<StreamSnapshot>(&client.messages.first().body);
        QVERIFY(snapshot);
        QVERIFY(!snapshot->breakers.isEmpty());
        QVERIFY(snapshot->metrics.breakerStates.contains(QStringLiteral("gateway.wechat")));
        QCOMPARE(snapshot->metrics.duplicates.size(), qsizetype(allLayers.size()));
        QVERIFY(snapshot->metrics.requests > 0); // this test's own calls, at least the agent's start-up checks
        for (qsizetype i = 0; i < client.messages.size(); ++i) {
            QCOMPARE(client.messages.at(i).seq, qint64(i + 1));
            if (i > 0)
                QVERIFY(std::holds_alternative<StreamMetrics>(client.messages.at(i).body));
            QVERIFY(client.messages.at(i).at.isValid());
            if (i > 0)
                QVERIFY(client.messages.at(i).at >= client.messages.at(i - 1).at);
        }
        const StreamMetrics *latest = client.latestMetrics();
        QVERIFY(latest->latencyP99Ms >= latest->latencyP50Ms);
    }

    void duplicateStormMovesTheStreamedCounts()
    {
        StreamClient client(m_agent->port(), kViewToken);
        QString error;
        const QString orderNo = QStringLiteral("ORD-STREAM-STORM");
        const QString paymentNo = m_agent->confirmedOrder(
            orderNo, 42, QStringLiteral("99.00"), QStringLiteral("SKU-STREAM-S"), QStringLiteral("wechat"), &error);
        QVERIFY2(!paymentNo.isEmpty(), qPrintable(error));
        // Quiet now: the stream catches up with the scrape.
        const Samples scraped = scrape();
        QTRY_VERIFY_WITH_TIMEOUT(client.latestMetrics() && sameAsScrape(*client.latestMetrics(), scraped), 30000);
        const StreamMetrics before = client.latest();
        const qsizetype firstStormMessage = client.messages.size();

        QVERIFY2(m_agent->simPayWithCopies(QStringLiteral("wechat"), paymentNo, 5, 30000, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?", {orderNo}) >= 5, 30000);
        const qint64 deliveries = m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?",
                                                {orderNo});
        QTRY_COMPARE_WITH_TIMEOUT(callbackDecisions(client.latest(), before), deliveries, 30000);

        const StreamMetrics after = client.latest();
        QCOMPARE(after.duplicates.value(Layer::None) - before.duplicates.value(Layer::None), qint64(1));
        for (Layer layer : allLayers) {
            if (layer == Layer::SideEffect)
                continue;
            const qint64 recorded = countRows(
                m_agent.database(),
                QStringLiteral("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND layer = ?"),
                {QVariant(orderNo), QVariant(layerName(layer))});
            const qint64 moved = after.duplicates.value(layer) - before.duplicates.value(layer);
            QVERIFY2(moved == recorded, qPrintable(QStringLiteral("%1: stream moved by %2, %3 deliveries recorded")
                                                       .arg(layerName(layer))
                                                       .arg(moved)
                                                       .arg(recorded)));
            if (moved > 0) {
                // A layer that moved had a positive rate in some message meanwhile.
                bool sawRate = false;
                for (qsizetype i = firstStormMessage; i < client.messages.size(); ++i) {
                    if (const auto *m = std::get_if<StreamMetrics>(&client.messages.at(i).body))
                        sawRate = sawRate || m->rates.value(layer) > 0;
                }
                QVERIFY2(sawRate, qPrintable(layerName(layer)));
            }
        }
        QVERIFY(deliveries - 1 >= 4);
        // And the stream says what /metrics says.
        const Samples scrapedAfter = scrape();
        QTRY_VERIFY_WITH_TIMEOUT(sameAsScrape(client.latest(), scrapedAfter), 30000);
        QVERIFY2(client.errors.isEmpty(), qPrintable(client.errors.join(u'\n')));
    }

    /// docs/openapi.yaml: metrics messages carry outbox pending/dead. The agent reads them in the
    /// background about once a second; the stream follows what the database says.
    void outboxCountsFollowTheDatabase()
    {
        StreamClient client(m_agent->port(), kViewToken);
        const QString aggregate = QStringLiteral("ORD-STREAM-OUTBOX");
        const auto deadInDatabase = [this] {
            return m_agent.count("SELECT COUNT(*) FROM outbox WHERE status = ?", {QStringLiteral("dead")});
        };
        const auto pendingInDatabase = [this] {
            return m_agent.count("SELECT COUNT(*) FROM outbox WHERE status = ?", {QStringLiteral("pending")});
        };
        QTRY_VERIFY_WITH_TIMEOUT(client.latest().outboxDead.has_value() && client.latest().outboxPending.has_value(),
                                 30000);
        const qint64 deadBefore = deadInDatabase();
        QTRY_COMPARE_WITH_TIMEOUT(client.latest().outboxDead.value_or(-1), deadBefore, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(client.latest().outboxPending.value_or(-1), pendingInDatabase(), 30000);

        // Two events given up on, written behind the agent's back: the stream shows them.
        for (int i = 1; i <= 2; ++i) {
            QVERIFY(execSql(m_agent.database(),
                            QStringLiteral("INSERT INTO outbox (event_id, event_type, aggregate_id, payload, status, "
                                           "attempts, next_attempt_at, last_error, created_at) "
                                           "VALUES (?, 'order.paid', ?, '{}', 'dead', 10, 0, 'webhook refused', 5)"),
                            {QStringLiteral("stream-test-dead-%1").arg(i), aggregate})
                        .ok());
        }
        QCOMPARE(deadInDatabase(), deadBefore + 2);
        QTRY_COMPARE_WITH_TIMEOUT(client.latest().outboxDead.value_or(-1), deadBefore + 2, 30000);
        // And forgets them when they are gone.
        QVERIFY(
            execSql(m_agent.database(), QStringLiteral("DELETE FROM outbox WHERE aggregate_id = ?"), {aggregate}).ok());
        QTRY_COMPARE_WITH_TIMEOUT(client.latest().outboxDead.value_or(-1), deadBefore, 30000);
        QVERIFY2(client.errors.isEmpty(), qPrintable(client.errors.join(u'\n')));
    }

    void operatorChangesArriveAsEvents()
    {
        StreamClient client(m_agent->port(), kViewToken);
        QTRY_VERIFY_WITH_TIMEOUT(client.messages.size() >= 2, 30000);
        QCOMPARE(m_agent
                     ->call("POST", QStringLiteral("/api/v1/breakers/gateway.wechat"),
                            "{\"mode\":\"forced_open\",\"reason\":\"stream test: platform incident\"}", kDesk)
                     .status,
                 200);
        QTRY_VERIFY_WITH_TIMEOUT(!client.events().isEmpty(), 30000);
        const StreamEvent forced = client.events().first();
        QCOMPARE(forced.kind, QStringLiteral("breaker.mode"));
        QCOMPARE(forced.subject, QStringLiteral("gateway.wechat"));
        QCOMPARE(forced.value, QStringLiteral("forced_open"));
        QCOMPARE(forced.actor, QStringLiteral("desk"));
        QCOMPARE(forced.reason, QStringLiteral("stream test: platform incident"));
        QTRY_COMPARE_WITH_TIMEOUT(client.latestMetrics()->breakerStates.value(QStringLiteral("gateway.wechat")),
                                  QStringLiteral("open"), 30000);

        QCOMPARE(m_agent
                     ->call("POST", QStringLiteral("/api/v1/breakers/gateway.wechat"),
                            "{\"mode\":\"auto\",\"reason\":\"incident over\"}", kDesk)
                     .status,
                 200);
        QCOMPARE(
            m_agent.setCallbackMode(QStringLiteral("accept_only"), QStringLiteral("stream test: database migration"))
                .status,
            200);
        QCOMPARE(m_agent.setCallbackMode(QStringLiteral("normal"), QStringLiteral("done")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), qsizetype(4), 30000);
        const QList<StreamEvent> events = client.events();
        QCOMPARE(events.at(1).value, QStringLiteral("auto"));
        QCOMPARE(events.at(2).kind, QStringLiteral("callback.mode"));
        QCOMPARE(events.at(2).subject, QStringLiteral("callbacks"));
        QCOMPARE(events.at(2).value, QStringLiteral("accept_only"));
        QCOMPARE(events.at(2).actor, QStringLiteral("desk"));
        QCOMPARE(events.at(2).reason, QStringLiteral("stream test: database migration"));
        QCOMPARE(events.at(3).value, QStringLiteral("normal"));
        for (qsizetype i = 1; i < client.messages.size(); ++i)
            QCOMPARE(client.messages.at(i).seq, client.messages.at(i - 1).seq + 1);
    }

    // A snapshot names the callback mode as the agent knows it, changes included.
    void snapshotCarriesTheCallbackMode()
    {
        QCOMPARE(snapshotNow().callbackMode, QStringLiteral("normal"));
        QCOMPARE(m_agent.setCallbackMode(QStringLiteral("accept_only"), QStringLiteral("stream test: snapshot")).status,
                 200);
        QCOMPARE(snapshotNow().callbackMode, QStringLiteral("accept_only"));
        QCOMPARE(m_agent.setCallbackMode(QStringLiteral("normal"), QStringLiteral("done")).status, 200);
        QCOMPARE(snapshotNow().callbackMode, QStringLiteral("normal"));
    }

    // Compensations proposed and decided — by hand and by the patrol — and the findings the
    // patrol raises arrive as events, with the actor and the reason; a finding seen again by
    // the next run is not news.
    void compensationsAndFindingsArriveAsEvents()
    {
        const QString orderNo = QStringLiteral("ORD-STREAM-COMP");
        const QString subject = QStringLiteral("order:") + orderNo;
        const qint64 user = 61;
        QString error;
        QVERIFY2(
            !m_agent->orderPaidAtSim(orderNo, user, QStringLiteral("12.00"), QStringLiteral("SKU-STREAM-COMP"), &error)
                 .isEmpty(),
            qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo}), qint64(1),
            30000);
        StreamClient client(m_agent->port(), kViewToken);
        QTRY_VERIFY_WITH_TIMEOUT(client.messages.size() >= 1, 30000);

        // An operator proposes; an approver rejects.
        const HttpAnswer proposed = m_agent->call(
            "POST", QStringLiteral("/api/v1/compensations"),
            QStringLiteral("{\"kind\":\"restore_stock\",\"order_no\":\"%1\",\"reason\":\"stream test: by hand\"}")
                .arg(orderNo)
                .toUtf8(),
            kDesk);
        QVERIFY2(proposed.status == 201, proposed.body.constData());
        const qint64 byHand = proposed.json().value(QStringLiteral("id")).toInteger();
        const QString byHandSubject = QStringLiteral("compensation:%1").arg(byHand);
        QCOMPARE(m_agent
                     ->call("POST", QStringLiteral("/api/v1/compensations/%1/reject").arg(byHand),
                            "{\"reason\":\"stream test: not needed\"}", kLead)
                     .status,
                 200);
        QTRY_COMPARE_WITH_TIMEOUT(client.events(streamevent::CompensationDecided, byHandSubject).size(), qsizetype(1),
                                  30000);
        const StreamEvent handProposed = client.events(streamevent::CompensationProposed, byHandSubject).value(0);
        QCOMPARE(handProposed.value, QStringLiteral("restore_stock"));
        QCOMPARE(handProposed.actor, QStringLiteral("desk"));
        QCOMPARE(handProposed.reason, QStringLiteral("stream test: by hand"));
        QCOMPARE(handProposed.detail.value(QStringLiteral("order_no")).toString(), orderNo);
        const StreamEvent rejected = client.events(streamevent::CompensationDecided, byHandSubject).first();
        QCOMPARE(rejected.value, QStringLiteral("rejected"));
        QCOMPARE(rejected.actor, QStringLiteral("lead"));
        QCOMPARE(rejected.reason, QStringLiteral("stream test: not needed"));

        // An extra coupon, written past the side-effect keys: the patrol's run raises a
        // finding and proposes its freeze; an approver approves, and it executes.
        QVERIFY(execSql(m_agent.database(),
                        QStringLiteral("INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, "
                                       "created_at, updated_at) VALUES (?, ?, 'WELCOME10-AGAIN', 'active', 1, 5, 5)"),
                        {orderNo, user})
                    .ok());
        QCOMPARE(
            m_agent
                ->call("POST", QStringLiteral("/api/v1/reconciliation/run"), "{\"reason\":\"stream test: run\"}", kDesk)
                .status,
            200);
        QTRY_COMPARE_WITH_TIMEOUT(client.events(streamevent::FindingRaised, subject).size(), qsizetype(1), 30000);
        const StreamEvent finding = client.events(streamevent::FindingRaised, subject).first();
        QCOMPARE(finding.value, QStringLiteral("effect_mismatch"));
        QCOMPARE(finding.actor, QStringLiteral("system:patrol"));
        QCOMPARE(finding.detail.value(QStringLiteral("order_no")).toString(), orderNo);
        QVERIFY(!finding.detail.value(QStringLiteral("evidence")).toObject().isEmpty());
        StreamEvent patrolProposed;
        const auto proposedByPatrol = [&] {
            for (const StreamEvent &e : client.events()) {
                if (e.kind == streamevent::CompensationProposed && e.actor == u"system:patrol"
                    && e.detail.value(QStringLiteral("order_no")).toString() == orderNo) {
                    patrolProposed = e;
                    return true;
                }
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(proposedByPatrol(), 30000);
        QCOMPARE(patrolProposed.value, QStringLiteral("freeze_coupon"));
        const qint64 byPatrol = patrolProposed.detail.value(QStringLiteral("id")).toInteger();
        QCOMPARE(m_agent
                     ->call("POST", QStringLiteral("/api/v1/compensations/%1/approve").arg(byPatrol),
                            "{\"reason\":\"stream test: freeze it\"}", kLead)
                     .status,
                 200);
        const QString byPatrolSubject = QStringLiteral("compensation:%1").arg(byPatrol);
        QTRY_COMPARE_WITH_TIMEOUT(client.events(streamevent::CompensationDecided, byPatrolSubject).size(), qsizetype(2),
                                  30000);
        const QList<StreamEvent> decided = client.events(streamevent::CompensationDecided, byPatrolSubject);
        QCOMPARE(decided.at(0).value, QStringLiteral("approved"));
        QCOMPARE(decided.at(1).value, QStringLiteral("executed"));
        for (const StreamEvent &e : decided) {
            QCOMPARE(e.actor, QStringLiteral("lead"));
            QCOMPARE(e.reason, QStringLiteral("stream test: freeze it"));
        }
        QVERIFY(decided.at(1)
                    .detail.value(QStringLiteral("result"))
                    .toObject()
                    .contains(QStringLiteral("frozen_coupon_ids")));

        // The next run sees nothing new for this order (the extra coupon is frozen; had it
        // not been, the open finding would only be seen again).
        QCOMPARE(m_agent
                     ->call("POST", QStringLiteral("/api/v1/reconciliation/run"), "{\"reason\":\"stream test: again\"}",
                            kDesk)
                     .status,
                 200);
        const qint64 seqAfterRun = client.lastSeq();
        QTRY_VERIFY_WITH_TIMEOUT(client.lastSeq() >= seqAfterRun + 3, 30000); // a few ticks later
        QCOMPARE(client.events(streamevent::FindingRaised, subject).size(), qsizetype(1));
        QVERIFY2(client.errors.isEmpty(), qPrintable(client.errors.join(u'\n')));
    }

    // A client that completes the handshake and then never reads, behind a small receive
    // buffer: the agent coalesces its metrics (or drops it) and keeps serving everyone else
    // for 10 000 ticks, its memory bounded.
    void clientThatNeverReadsCostsNothing()
    {
        const Samples before = scrape();
        QTcpSocket slow;
        slow.setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 4096);
        slow.setReadBufferSize(4096);
        slow.connectToHost(QStringLiteral("127.0.0.1"), quint16(m_agent->port()));
        QVERIFY(slow.waitForConnected(10000));
        slow.write(upgradeRequest(m_agent->port(), "/api/v1/stream", "Bearer view-token"));
        QVERIFY(slow.waitForReadyRead(10000));
        QVERIFY2(slow.peek(12) == "HTTP/1.1 101", slow.peek(200).constData());
        // From here on nobody reads `slow`: its 4 KiB buffer fills and Qt stops reading.

        StreamClient reader(m_agent->port(), kViewToken);
        QTRY_VERIFY_WITH_TIMEOUT(reader.messages.size() >= 10, 30000);
        const qint64 rssStart = rssKiB(m_agent->pid());
        QVERIFY(rssStart > 0);
        qint64 rssMax = rssStart;
        int healthChecks = 0;
        // Failure guard only: 10 000 ticks of 5 ms take about a minute.
        QDeadlineTimer guard(std::chrono::minutes(10));
        while (reader.lastSeq() < kTicks && !guard.hasExpired()) {
            QTest::qWait(500);
            QCOMPARE(m_agent->call("GET", QStringLiteral("/healthz")).status, 200);
            ++healthChecks;
            rssMax = std::max(rssMax, rssKiB(m_agent->pid()));
        }
        QVERIFY2(reader.lastSeq() >= kTicks, qPrintable(QStringLiteral("reader at seq %1").arg(reader.lastSeq())));
        QVERIFY(healthChecks > 0);
        QVERIFY2(reader.errors.isEmpty(), qPrintable(reader.errors.join(u'\n')));
        QVERIFY2(rssMax - rssStart < kRssGrowthBoundKiB,
                 qPrintable(QStringLiteral("agent RSS grew from %1 KiB to %2 KiB").arg(rssStart).arg(rssMax)));

        const Samples after = scrape();
        const QString coalesced = QStringLiteral("payonce_stream_coalesced_total");
        const QString dropped = QStringLiteral("payonce_stream_dropped_total");
        QVERIFY2(after.count(coalesced) && after.count(dropped), "the stream counters are in /metrics");
        const double moved = after.at(coalesced) - before.at(coalesced) + after.at(dropped) - before.at(dropped);
        QVERIFY2(
            moved > 0,
            qPrintable(QStringLiteral("coalesced %1, dropped %2").arg(after.at(coalesced)).arg(after.at(dropped))));
        qInfo("slow client: coalesced %g, dropped %g; agent RSS %lld -> max %lld KiB over %lld messages",
              after.at(coalesced), after.at(dropped), rssStart, rssMax, reader.lastSeq());
    }

private:
    Samples scrape() { return m_agent->scrapeMetrics(); }

    static bool sameAsScrape(const StreamMetrics &m, const Samples &scraped)
    {
        for (Layer layer : allLayers) {
            const auto it = scraped.find(layerKey(layer));
            if (it == scraped.end() || double(m.duplicates.value(layer)) != it->second)
                return false;
        }
        return true;
    }

    /// Callback answers decided since `before` (every layer but side_effect).
    static qint64 callbackDecisions(const StreamMetrics &now, const StreamMetrics &before)
    {
        qint64 sum = 0;
        for (Layer layer : allLayers) {
            if (layer != Layer::SideEffect)
                sum += now.duplicates.value(layer) - before.duplicates.value(layer);
        }
        return sum;
    }

    /// The snapshot a client connecting now gets (empty when none came).
    StreamSnapshot snapshotNow()
    {
        StreamClient client(m_agent->port(), kViewToken);
        if (!QTest::qWaitFor([&] { return !client.messages.isEmpty(); }, 30000))
            return {};
        const auto *snapshot = std::get_if<StreamSnapshot>(&client.messages.first().body);
        return snapshot ? *snapshot : StreamSnapshot{};
    }

    AgentFixture m_agent;
};

QTEST_GUILESS_MAIN(TestStream)
#include "tst_stream.moc"
