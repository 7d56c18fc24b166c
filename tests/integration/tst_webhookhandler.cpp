// The outbox's webhook handler against a receiver in this process (a QTcpServer served by
// the handler's own blocking event loop): POST JSON with Idempotency-Key = event id to
// every URL, 2xx = done, anything else a failure; its breaker stops calls to a sick receiver.

#include "core/circuitbreaker.h"
#include "core/ports/clock.h"
#include "webhook/webhookhandler.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

using namespace payonce;

namespace {

/// A minimal HTTP/1.1 receiver: records each request and answers with `status`, or never
/// answers when status is 0.
class Receiver : public QObject {
public:
    struct Request {
        QByteArray method;
        QByteArray path;
        QHash<QByteArray, QByteArray> headers; ///< lower-case names
        QByteArray body;
    };

    explicit Receiver(int answer) : status(answer)
    {
        m_server.listen(QHostAddress::LocalHost);
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                socket->setParent(this);
                QObject::connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onData(socket); });
            }
        });
    }

    QUrl url(const QString &path) const
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_server.serverPort()).arg(path));
    }

    int status;
    QList<Request> requests;

private:
    void onData(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        Request request;
        const QList<QByteArray> lines = buffer.left(end).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        request.method = first.value(0);
        request.path = first.value(1);
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines[i].indexOf(':');
            if (colon > 0)
                request.headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
        }
        const qsizetype length = request.headers.value("content-length").toLongLong();
        if (buffer.size() < end + 4 + length)
            return;
        request.body = buffer.mid(end + 4, length);
        m_buffers.remove(socket);
        requests.append(request);
        if (status == 0)
            return;
        socket->write("HTTP/1.1 " + QByteArray::number(status) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        socket->disconnectFromHost();
    }

    QTcpServer m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

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

class FakeClock final : public core::Clock {
public:
    qint64 nowMs() const override { return 1'700'000'000'000; }
};

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
        QCOMPARE(a.requests.size(), 1);
        QCOMPARE(b.requests.size(), 1);
        const Receiver::Request &r = a.requests.first();
        QCOMPARE(r.method, QByteArray("POST"));
        QCOMPARE(r.path, QByteArray("/hooks/a"));
        QCOMPARE(r.headers.value("idempotency-key"), QByteArray("order.paid:ORD001"));
        QVERIFY(r.headers.value("content-type").startsWith("application/json"));
        const QJsonObject body = QJsonDocument::fromJson(r.body).object();
        QCOMPARE(body.value(QStringLiteral("event_id")).toString(), QStringLiteral("order.paid:ORD001"));
        QCOMPARE(body.value(QStringLiteral("event_type")).toString(), QStringLiteral("order.paid"));
        QCOMPARE(body.value(QStringLiteral("payload")).toObject().value(QStringLiteral("amount_fen")).toInt(), 9900);
        QCOMPARE(b.requests.first().body, r.body);
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
        QCOMPARE(receiver.requests.size(), 1);
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
        QCOMPARE(sick.requests.size(), 2);
        QCOMPARE(breaker.state(), core::BreakerState::Open);
        const auto refused = handler.deliver(eventNamed(QStringLiteral("e3")));
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().internalMessage.contains(QStringLiteral("open")));
        QCOMPARE(sick.requests.size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestWebhookHandler)
#include "tst_webhookhandler.moc"
