// The outbox's webhook handler against a receiver in this process (a QTcpServer on a
// thread of its own, testsupport::WebhookReceiver): POST JSON with Idempotency-Key = event id to
// every URL, 2xx = done, anything else a failure; its breaker stops calls to a sick receiver.

#include "webhookreceiver.h"

#include "core/gateways/circuitbreaker.h"
#include "core/ports/clock.h"
#include "fakes/fakeclock.h"
#include "webhook/webhookhandler.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace payonce;
using payonce::testsupport::FakeClock;

namespace {

using Receiver = testsupport::WebhookReceiver;

core::OutboxEvent eventNamed(const QString &id)
{
    core::OutboxEvent e;
    e.id = 7;
    e.eventId = id;
    e.eventType = QStringLiteral("order.paid");
    e.aggregateId = QStringLiteral("ORD001");
    e.payload = QStringLiteral("{\"order_no\":\"ORD001\",\"amount_fen\":9900}");
    e.traceId = QStringLiteral("trace-1");
    return e;
}

} // namespace

class TestWebhookHandler : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void postsToEveryUrlWithTheEventIdAsKey()
    {
        Receiver a(200), b(204);
        webhook::WebhookHandler handler({{a.url(QStringLiteral("/hooks/a")), b.url(QStringLiteral("/b"))}, 5000});
        const auto delivered = handler.deliver(eventNamed(QStringLiteral("order.paid:ORD001")));
        QVERIFY2(delivered.ok(), delivered.ok() ? "" : qPrintable(delivered.error().internalMessage));
        const QList<Receiver::Request> toA = a.requests();
        QCOMPARE(toA.size(), 1);
        QCOMPARE(b.requests().size(), 1);
        const Receiver::Request &r = toA.first();
        QCOMPARE(r.method, QByteArray("POST"));
        QCOMPARE(r.path, QByteArray("/hooks/a"));
        QCOMPARE(r.headers.value("idempotency-key"), QByteArray("order.paid:ORD001"));
        QVERIFY(r.headers.value("content-type").startsWith("application/json"));
        const QJsonObject body = QJsonDocument::fromJson(r.body).object();
        QCOMPARE(body.value(QStringLiteral("event_id")).toString(), QStringLiteral("order.paid:ORD001"));
        QCOMPARE(body.value(QStringLiteral("event_type")).toString(), QStringLiteral("order.paid"));
        QCOMPARE(body.value(QStringLiteral("payload")).toObject().value(QStringLiteral("amount_fen")).toInt(), 9900);
        QCOMPARE(b.requests().first().body, r.body);
    }

    void non2xxIsAFailure_data()
    {
        QTest::addColumn<int>("status");
        QTest::newRow("500") << 500;
        QTest::newRow("409") << 409;
        QTest::newRow("302") << 302;
    }
    void non2xxIsAFailure()
    {
        QFETCH(int, status);
        Receiver receiver(status);
        webhook::WebhookHandler handler({{receiver.url(QStringLiteral("/h"))}, 5000});
        const auto delivered = handler.deliver(eventNamed(QStringLiteral("e1")));
        QVERIFY(!delivered.ok());
        QVERIFY2(delivered.error().internalMessage.contains(QStringLiteral("HTTP %1").arg(status)),
                 qPrintable(delivered.error().internalMessage));
        QCOMPARE(receiver.requests().size(), 1);
    }

    void timeoutIsAFailure()
    {
        Receiver silent(0);
        webhook::WebhookHandler handler({{silent.url(QStringLiteral("/h"))}, 300});
        QElapsedTimer timer;
        timer.start();
        const auto delivered = handler.deliver(eventNamed(QStringLiteral("e2")));
        QVERIFY(!delivered.ok());
        QCOMPARE(delivered.error().code, core::ErrorCode::Unavailable);
        QVERIFY(timer.elapsed() < 3000);
    }

    void openBreakerStopsCalls()
    {
        FakeClock clock;
        core::CircuitBreakerOptions options;
        options.minimumCalls = 2;
        options.failureRateThreshold = 0.5;
        core::CircuitBreaker breaker(QStringLiteral("webhook"), clock, nullptr, options);
        Receiver sick(503);
        webhook::WebhookHandler handler({{sick.url(QStringLiteral("/h"))}, 5000}, &breaker);
        QVERIFY(!handler.deliver(eventNamed(QStringLiteral("e3"))).ok());
        QVERIFY(!handler.deliver(eventNamed(QStringLiteral("e3"))).ok());
        QCOMPARE(sick.requests().size(), 2);
        QCOMPARE(breaker.state(), core::BreakerState::Open);
        const auto refused = handler.deliver(eventNamed(QStringLiteral("e3")));
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().internalMessage.contains(QStringLiteral("open")));
        QCOMPARE(sick.requests().size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestWebhookHandler)
#include "tst_webhookhandler.moc"
