#include "shared/streammessage.h"

#include <QTest>
#include <QTimeZone>

using namespace payonce;

namespace {

QDateTime at()
{
    return QDateTime(QDate(2026, 11, 29), QTime(14, 53, 14, 123), QTimeZone::utc());
}

StreamMetrics sampleMetrics()
{
    StreamMetrics m;
    qint64 n = 0;
    for (Layer layer : allLayers) {
        m.duplicates.insert(layer, n * 7);
        m.rates.insert(layer, double(n) * 0.25);
        ++n;
    }
    m.requests = 1234;
    m.latencyP50Ms = 1.5;
    m.latencyP99Ms = 42.125;
    m.breakerStates.insert(QStringLiteral("gateway.wechat"), QStringLiteral("open"));
    m.breakerStates.insert(QStringLiteral("redis"), QStringLiteral("closed"));
    m.redisDegraded = true;
    return m;
}

QByteArray metricsJson(const QByteArray &replaceFrom = {}, const QByteArray &replaceTo = {})
{
    QByteArray json = encodeStreamMessage({5, at(), sampleMetrics()});
    if (!replaceFrom.isEmpty()) {
        Q_ASSERT(json.contains(replaceFrom));
        json.replace(replaceFrom, replaceTo);
    }
    return json;
}

} // namespace

Q_DECLARE_METATYPE(payonce::StreamMessage)

class TestStreamMessage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTrip_data()
    {
        QTest::addColumn<StreamMessage>("message");
        QTest::addColumn<QString>("type");
        StreamSnapshot snapshot{
            sampleMetrics(),
            {{QStringLiteral("gateway.wechat"), QStringLiteral("open"), QStringLiteral("forced_open"),
              QStringLiteral("desk"), QStringLiteral("platform incident")},
             {QStringLiteral("redis"), QStringLiteral("closed"), QStringLiteral("auto"), {}, {}}},
            QStringLiteral("accept_only")};
        QTest::newRow("snapshot") << StreamMessage{1, at(), snapshot} << QStringLiteral("snapshot");
        StreamSnapshot bare{sampleMetrics(), {}, {}};
        QTest::newRow("snapshot without mode") << StreamMessage{1, at(), bare} << QStringLiteral("snapshot");
        QTest::newRow("metrics") << StreamMessage{2, at(), sampleMetrics()} << QStringLiteral("metrics");
        QTest::newRow("metrics, empty breakers")
            << StreamMessage{3, at(),
                             StreamMetrics{sampleMetrics().duplicates, sampleMetrics().rates, 0, 0, 0, {}, false}}
            << QStringLiteral("metrics");
        StreamMetrics withOutbox = sampleMetrics();
        withOutbox.outboxPending = 12;
        withOutbox.outboxDead = 0;
        QTest::newRow("metrics with outbox counts") << StreamMessage{4, at(), withOutbox} << QStringLiteral("metrics");
        QTest::newRow("event") << StreamMessage{9, at(),
                                                StreamEvent{QStringLiteral("breaker.mode"),
                                                            QStringLiteral("gateway.wechat"),
                                                            QStringLiteral("forced_open"), QStringLiteral("desk"),
                                                            QStringLiteral("platform incident")}}
                               << QStringLiteral("event");
        QTest::newRow("event with detail")
            << StreamMessage{10, at(),
                             StreamEvent{
                                 streamevent::CompensationDecided, QStringLiteral("compensation:7"),
                                 QStringLiteral("executed"), QStringLiteral("lead"), QStringLiteral("double charge"),
                                 QJsonObject{{QStringLiteral("id"), 7},
                                             {QStringLiteral("order_no"), QStringLiteral("ORD1")},
                                             {QStringLiteral("result"),
                                              QJsonObject{{QStringLiteral("refund_no"), QStringLiteral("RF7")}}}}}}
            << QStringLiteral("event");
        // Every kind the codec knows goes through it.
        for (const QString &kind : streamEventKinds())
            QTest::newRow(qPrintable(QStringLiteral("event kind ") + kind))
                << StreamMessage{11, at(),
                                 StreamEvent{kind, QStringLiteral("s"), QStringLiteral("v"), QStringLiteral("a"),
                                             QStringLiteral("r")}}
                << QStringLiteral("event");
    }
    void roundTrip()
    {
        QFETCH(StreamMessage, message);
        QFETCH(QString, type);
        const QByteArray json = encodeStreamMessage(message);
        QVERIFY2(json.contains(QByteArray("\"type\":\"" + type.toLatin1() + '"')), json.constData());
        QVERIFY2(json.contains("\"at\":\"2026-11-29T14:53:14.123Z\""), json.constData());
        QString error;
        const auto decoded = decodeStreamMessage(json, &error);
        QVERIFY2(decoded, qPrintable(error));
        QCOMPARE(decoded->typeName(), type);
        QCOMPARE(decoded->seq, message.seq);
        QCOMPARE(decoded->at, message.at);
        QCOMPARE(decoded->at.timeSpec(), Qt::UTC);
        QVERIFY(*decoded == message);
        // Encoding is stable: what the console decodes it would encode the same way.
        QCOMPARE(encodeStreamMessage(*decoded), json);
    }

    void wireShape()
    {
        const QByteArray json = metricsJson();
        QVERIFY2(json.contains("\"duplicates\":{"), json.constData());
        QVERIFY2(json.contains("\"idempotency_key\":7"), json.constData());
        QVERIFY2(json.contains("\"latency_ms\":{\"p50\":1.5,\"p99\":42.125}"), json.constData());
        QVERIFY2(json.contains("\"breaker_states\":{\"gateway.wechat\":\"open\",\"redis\":\"closed\"}"),
                 json.constData());
        QVERIFY2(json.contains("\"redis_degraded\":true"), json.constData());
        QVERIFY2(json.contains("\"seq\":5"), json.constData());
        // Outbox counts are left out while the agent has not read them.
        QVERIFY2(!json.contains("outbox_"), json.constData());
        StreamMetrics known = sampleMetrics();
        known.outboxPending = 3;
        known.outboxDead = 1;
        const QByteArray withCounts = encodeStreamMessage({6, at(), known});
        QVERIFY2(withCounts.contains("\"outbox_pending\":3"), withCounts.constData());
        QVERIFY2(withCounts.contains("\"outbox_dead\":1"), withCounts.constData());
    }

    void refusesMalformed_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("not json") << QByteArray("{\"type\":");
        QTest::newRow("array") << QByteArray("[1,2]");
        QTest::newRow("empty object") << QByteArray("{}");
        QTest::newRow("unknown type") << metricsJson("\"type\":\"metrics\"", "\"type\":\"gossip\"");
        QTest::newRow("seq zero") << metricsJson("\"seq\":5", "\"seq\":0");
        QTest::newRow("seq negative") << metricsJson("\"seq\":5", "\"seq\":-3");
        QTest::newRow("seq fractional") << metricsJson("\"seq\":5", "\"seq\":5.5");
        QTest::newRow("seq string") << metricsJson("\"seq\":5", "\"seq\":\"5\"");
        QTest::newRow("at without ms") << metricsJson("14:53:14.123Z", "14:53:14Z");
        QTest::newRow("at not utc") << metricsJson("14:53:14.123Z", "14:53:14.123+08:00");
        QTest::newRow("at garbage") << metricsJson("2026-11-29T14:53:14.123Z", "yesterday at noon at 3");
        QTest::newRow("unknown layer") << metricsJson("\"idempotency_key\":7", "\"idempotency_kee\":7");
        QTest::newRow("negative count") << metricsJson("\"idempotency_key\":7", "\"idempotency_key\":-7");
        QTest::newRow("fractional count") << metricsJson("\"idempotency_key\":7", "\"idempotency_key\":7.5");
        QTest::newRow("count as string") << metricsJson("\"idempotency_key\":7", "\"idempotency_key\":\"7\"");
        QTest::newRow("no requests") << metricsJson("\"requests\":1234,", "");
        QTest::newRow("latency not object")
            << metricsJson("\"latency_ms\":{\"p50\":1.5,\"p99\":42.125}", "\"latency_ms\":3");
        QTest::newRow("degraded not bool") << metricsJson("\"redis_degraded\":true", "\"redis_degraded\":1");
        QTest::newRow("outbox pending negative")
            << metricsJson("\"redis_degraded\":true", "\"redis_degraded\":true,\"outbox_pending\":-1");
        QTest::newRow("outbox dead fractional")
            << metricsJson("\"redis_degraded\":true", "\"redis_degraded\":true,\"outbox_dead\":0.5");
        QTest::newRow("outbox pending as string")
            << metricsJson("\"redis_degraded\":true", "\"redis_degraded\":true,\"outbox_pending\":\"2\"");
        QTest::newRow("breaker state not string") << metricsJson("\"redis\":\"closed\"", "\"redis\":0");
        const QByteArray event = encodeStreamMessage(
            {1, at(),
             StreamEvent{QStringLiteral("breaker.mode"), QStringLiteral("x"), QStringLiteral("auto"),
                         QStringLiteral("desk"), QStringLiteral("why")}});
        QTest::newRow("event without actor") << QByteArray(event).replace("\"actor\":\"desk\",", "");
        QTest::newRow("event with empty kind")
            << QByteArray(event).replace("\"kind\":\"breaker.mode\"", "\"kind\":\"\"");
        QTest::newRow("event of an unknown kind")
            << QByteArray(event).replace("\"kind\":\"breaker.mode\"", "\"kind\":\"breaker.moood\"");
        QTest::newRow("event detail not an object")
            << QByteArray(event).replace("\"kind\":", "\"detail\":[1],\"kind\":");
        const QByteArray snapshot = encodeStreamMessage({1, at(), StreamSnapshot{sampleMetrics(), {}, {}}});
        QTest::newRow("snapshot without breakers") << QByteArray(snapshot).replace(",\"breakers\":[]", "");
        QTest::newRow("snapshot breakers not array")
            << QByteArray(snapshot).replace("\"breakers\":[]", "\"breakers\":{}");
    }
    void refusesMalformed()
    {
        QFETCH(QByteArray, json);
        QString error;
        QVERIFY2(!decodeStreamMessage(json, &error), json.constData());
        QVERIFY(!error.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestStreamMessage)
#include "tst_streammessage.moc"
