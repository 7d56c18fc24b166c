// Trace ids end to end on the real agent with payonce-sim and a webhook receiver
// in this test, per dialect: a confirm sent with a W3C traceparent → the simulated gateway
// received that trace id (with a span id of the agent's own) → the simulator's payment
// notification continues the trace → the callback's delivery row and its order.paid outbox
// row store it → the webhook delivery carries it as traceparent → the agent's JSON log
// lines for those requests carry "trace_id". A malformed traceparent starts a new trace
// (never an error), and a line logged on the handler's worker thread carries the trace id.

#include "agentconfig.h"
#include "agentfixture.h"
#include "storagefixture.h"
#include "webhookreceiver.h"

#include "shared/tracecontext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

const qint64 kUser = 4242;

/// The agent's JSON log lines (one object per line; other output is skipped).
QList<QJsonObject> jsonLines(const QString &output)
{
    QList<QJsonObject> lines;
    for (const QString &line : output.split(u'\n', Qt::SkipEmptyParts)) {
        const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8());
        if (doc.isObject())
            lines.append(doc.object());
    }
    return lines;
}

/// The log lines of one trace.
QList<QJsonObject> linesOfTrace(const QString &output, const QString &traceId)
{
    QList<QJsonObject> matching;
    for (const QJsonObject &line : jsonLines(output)) {
        if (line.value(QStringLiteral("trace_id")).toString() == traceId)
            matching.append(line);
    }
    return matching;
}

bool anyLine(const QList<QJsonObject> &lines, const QString &category, const QString &messagePrefix)
{
    return std::any_of(lines.begin(), lines.end(), [&](const QJsonObject &line) {
        return line.value(QStringLiteral("category")).toString() == category
               && line.value(QStringLiteral("msg")).toString().startsWith(messagePrefix);
    });
}

QString messages(const QList<QJsonObject> &lines)
{
    QStringList out;
    for (const QJsonObject &line : lines)
        out << line.value(QStringLiteral("category")).toString() + u' ' + line.value(QStringLiteral("msg")).toString();
    return out.join(u'\n');
}

} // namespace

class TestTracing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_receiver = std::make_unique<WebhookReceiver>(200);
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            {QStringLiteral("log_format"), QStringLiteral("json")},
            {QStringLiteral("outbox"),
             QJsonObject{{QStringLiteral("webhook_urls"),
                          QJsonArray{m_receiver->url(QStringLiteral("/hooks/paid")).toString()}}}},
            noPatrolTimer(),
        };
        // The access line of every reply (debug level, off by default).
        options.environment = {QStringLiteral("QT_LOGGING_RULES=payonce.agent.access.debug=true")};
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    // One trace from the click to the webhook.
    void confirmTraceReachesGatewayCallbackOutboxAndWebhook()
    {
        const QString orderNo = QStringLiteral("ORD-TRACE-1");
        const QString traceId = QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736");
        const QByteArray incoming = "00-" + traceId.toLatin1() + "-00f067aa0ba902b7-01";
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, kUser, QStringLiteral("9.90"), QStringLiteral("SKU-TRACE"), &error),
                 qPrintable(error));

        const HttpAnswer confirmed = confirm(orderNo, QStringLiteral("wechat"), incoming);
        QVERIFY2(confirmed.status == 200, qPrintable(describe(confirmed)));
        QCOMPARE(QString::fromLatin1(confirmed.header("x-trace-id")), traceId);
        const QString paymentNo = confirmed.json().value(QStringLiteral("payment_no")).toString();
        QVERIFY(!paymentNo.isEmpty());

        // The gateway call carried the trace, under a span id of the agent's own.
        const auto atGateway = TraceContext::parse(simTraceParent(paymentNo));
        QVERIFY2(atGateway, qPrintable(QString::fromLatin1(simTraceParent(paymentNo))));
        QCOMPARE(atGateway->traceId, traceId);
        QVERIFY(atGateway->parentId != QStringLiteral("00f067aa0ba902b7"));
        QCOMPARE(atGateway->flags, QStringLiteral("01"));

        // The user pays; the simulator's notification continues the trace.
        const HttpAnswer paid = m_agent->simPay(QStringLiteral("wechat"), paymentNo);
        QVERIFY2(paid.status == 200, qPrintable(describe(paid)));
        const QByteArray eventId = "order.paid:" + orderNo.toUtf8();
        QTRY_COMPARE_WITH_TIMEOUT(m_receiver->requestsWithKey(eventId).size(), 1, 30000);

        const WebhookReceiver::Request delivery = m_receiver->requestsWithKey(eventId).first();
        const auto atWebhook = TraceContext::parse(delivery.headers.value("traceparent"));
        QVERIFY2(atWebhook, delivery.headers.value("traceparent").constData());
        QCOMPARE(atWebhook->traceId, traceId);
        QCOMPARE(QJsonDocument::fromJson(delivery.body).object().value(QStringLiteral("trace_id")).toString(), traceId);

        QCOMPARE(firstValueText(m_agent.database(), QStringLiteral("SELECT trace_id FROM outbox WHERE event_id = ?"),
                                {QString::fromUtf8(eventId)}),
                 traceId);
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ? AND trace_id = ?",
                               {orderNo, traceId}),
                 m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?", {orderNo}));
        QVERIFY(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE order_no = ?", {orderNo}) >= 1);

        // The agent's log lines of that trace: the confirm's and the callback's access lines
        // (event loop), the webhook delivery's line (a dispatcher thread).
        QTRY_VERIFY_WITH_TIMEOUT(anyLine(linesOfTrace(m_agent->output(), traceId),
                                         QStringLiteral("payonce.agent.outbox"),
                                         QStringLiteral("webhook: event ") + QString::fromUtf8(eventId) + u' '),
                                 10000);
        const QList<QJsonObject> lines = linesOfTrace(m_agent->output(), traceId);
        QVERIFY2(
            anyLine(lines, QStringLiteral("payonce.agent.access"), QStringLiteral("POST /api/v1/payments/confirm 200")),
            qPrintable(messages(lines)));
        QVERIFY2(
            anyLine(lines, QStringLiteral("payonce.agent.access"), QStringLiteral("POST /api/v1/callbacks/wechat 200")),
            qPrintable(messages(lines)));
        // No line of this trace belongs to another request.
        for (const QJsonObject &line : lines) {
            const QString msg = line.value(QStringLiteral("msg")).toString();
            QVERIFY2(!msg.contains(QStringLiteral("/api/v1/payments/token")), qPrintable(msg));
        }
    }

    // A line the handler logs on its worker thread names the request's trace: a gateway
    // that fails makes the confirm pipeline log "confirm: gateway failed" there.
    void workerThreadLinesCarryTheTrace()
    {
        const QString orderNo = QStringLiteral("ORD-TRACE-2");
        const QString traceId = QStringLiteral("0af7651916cd43dd8448eb211c80319c");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, kUser, QStringLiteral("3.00"), QStringLiteral("SKU-TRACE"), &error),
                 qPrintable(error));
        QCOMPARE(m_agent
                     ->simCall("POST", QStringLiteral("/sim/faults"),
                               "{\"channel\":\"alipay\",\"error_rate\":1.0,\"error_status\":500}")
                     .status,
                 200);
        const HttpAnswer confirmed = confirm(orderNo, QStringLiteral("alipay"),
                                             "00-" + traceId.toLatin1() + "-b7ad6b7169203331-00");
        QCOMPARE(m_agent->simCall("POST", QStringLiteral("/sim/faults"), "{\"channel\":\"alipay\"}").status, 200);
        QVERIFY2(confirmed.status == 503, qPrintable(describe(confirmed)));
        QCOMPARE(QString::fromLatin1(confirmed.header("x-trace-id")), traceId);
        QTRY_VERIFY_WITH_TIMEOUT(anyLine(linesOfTrace(m_agent->output(), traceId), QStringLiteral("payonce.agent.core"),
                                         QStringLiteral("confirm: gateway failed")),
                                 10000);
        const QList<QJsonObject> lines = linesOfTrace(m_agent->output(), traceId);
        QVERIFY2(
            anyLine(lines, QStringLiteral("payonce.agent.access"), QStringLiteral("POST /api/v1/payments/confirm 503")),
            qPrintable(messages(lines)));
    }

    // Malformed traceparent headers are ignored: the request is served under a new trace,
    // which the gateway call then carries.
    void malformedTraceParentStartsANewTrace_data()
    {
        QTest::addColumn<QByteArray>("traceparent");
        // The parser's every rule is tst_tracecontext's; here, that the agent ignores them.
        QTest::newRow("garbage") << QByteArray("not-a-trace");
        QTest::newRow("upper case") << QByteArray("00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01");
        QTest::newRow("zero trace id") << QByteArray("00-00000000000000000000000000000000-00f067aa0ba902b7-01");
    }
    void malformedTraceParentStartsANewTrace()
    {
        QFETCH(QByteArray, traceparent);
        const QString orderNo = QStringLiteral("ORD-TRACE-M%1").arg(++m_malformed);
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, kUser, QStringLiteral("1.00"), QStringLiteral("SKU-TRACE"), &error),
                 qPrintable(error));
        const HttpAnswer confirmed = confirm(orderNo, QStringLiteral("wechat"), traceparent);
        QVERIFY2(confirmed.status == 200, qPrintable(describe(confirmed)));
        const QString fresh = QString::fromLatin1(confirmed.header("x-trace-id"));
        QVERIFY2(QRegularExpression(QStringLiteral("^[0-9a-f]{32}$")).match(fresh).hasMatch(), qPrintable(fresh));
        QVERIFY(fresh != QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736"));
        QVERIFY(fresh != QStringLiteral("00000000000000000000000000000000"));
        const auto atGateway = TraceContext::parse(
            simTraceParent(confirmed.json().value(QStringLiteral("payment_no")).toString()));
        QVERIFY(atGateway);
        QCOMPARE(atGateway->traceId, fresh);
    }

private:
    HttpAnswer confirm(const QString &orderNo, const QString &channel, const QByteArray &traceparent) const
    {
        const QString token = m_agent->issueToken(kUser, orderNo);
        const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                                          {QStringLiteral("order_no"), orderNo},
                                                          {QStringLiteral("channel"), channel}})
                                    .toJson(QJsonDocument::Compact);
        return m_agent->call("POST", QStringLiteral("/api/v1/payments/confirm"), body,
                             {{"X-User-Id", QByteArray::number(kUser)},
                              {"Idempotency-Key", orderNo.toUtf8()},
                              {"traceparent", traceparent}});
    }
    /// The traceparent the simulator received with the trade's create request.
    QByteArray simTraceParent(const QString &paymentNo) const
    {
        const QJsonArray trades = m_agent->simCall("GET", QStringLiteral("/sim/trades/") + paymentNo)
                                      .json()
                                      .value(QStringLiteral("trades"))
                                      .toArray();
        return trades.isEmpty() ? QByteArray()
                                : trades.first().toObject().value(QStringLiteral("traceparent")).toString().toLatin1();
    }

    std::unique_ptr<WebhookReceiver> m_receiver;
    AgentFixture m_agent;
    int m_malformed = 0;
};

QTEST_GUILESS_MAIN(TestTracing)
#include "tst_tracing.moc"
