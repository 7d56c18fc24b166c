// resources/nginx/payonce.conf (included unchanged) in front of the REAL payonce-agent,
// with payonce-sim beside it: https through nginx to /readyz, and a whole payment set-up
// and confirm (operator token, user header, Idempotency-Key) proxied to the agent; the live
// stream over wss through nginx, trusting the test certificate as the only CA.
#include "agentprocess.h"
#include "httptestsupport.h"
#include "serverharness.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTest>
#include <QWebSocket>

#include "shared/streammessage.h"

using namespace payonce::testsupport;

class TestAgentNginx : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void paymentThroughNginx();
    void streamThroughNginxOverWss();
};

namespace {

using Headers = QList<QPair<QByteArray, QByteArray>>;

struct Answer {
    int status = 0;
    QByteArray body;
    QString error;
    std::unique_ptr<QNetworkReply> reply;
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    QString describe() const
    {
        return QStringLiteral("%1 %2 %3").arg(status).arg(QString::fromUtf8(body), error);
    }
};

class Client {
public:
    Client(int port, const QString &caPath) : m_base(QStringLiteral("https://127.0.0.1:%1").arg(port))
    {
        m_tls = QSslConfiguration::defaultConfiguration();
        m_tls.setCaCertificates(QSslCertificate::fromPath(caPath));
    }

    Answer send(const QByteArray &method, const QString &path, const QByteArray &body = {}, const Headers &headers = {})
    {
        QNetworkRequest request{QUrl(m_base + path)};
        request.setSslConfiguration(m_tls);
        if (!body.isEmpty())
            request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        for (const auto &[name, value] : headers)
            request.setRawHeader(name, value);
        Answer answer;
        answer.reply.reset(m_network.sendCustomRequest(request, method, body));
        QElapsedTimer timer;
        timer.start();
        while (!answer.reply->isFinished() && timer.elapsed() < 30000)
            QTest::qWait(10);
        answer.status = answer.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        answer.body = answer.reply->readAll();
        if (answer.reply->error() != QNetworkReply::NoError)
            answer.error = answer.reply->errorString();
        return answer;
    }

private:
    QString m_base;
    QSslConfiguration m_tls;
    QNetworkAccessManager m_network;
};

/// TLS that trusts exactly the test certificate (nginx's self-signed one) as its CA.
QSslConfiguration trustingOnly(const QString &caPath)
{
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setCaCertificates(QSslCertificate::fromPath(caPath));
    return tls;
}

/// The status line nginx answers to a WebSocket handshake sent over TLS by hand (no token),
/// or the reason there was none.
QByteArray handshakeStatusLine(int port, const QString &caPath, const QByteArray &target)
{
    QSslSocket socket;
    socket.setSslConfiguration(trustingOnly(caPath));
    socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForEncrypted(10000))
        return "no TLS: " + socket.errorString().toUtf8();
    socket.write("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
    QByteArray answer;
    while (!answer.contains("\r\n") && socket.waitForReadyRead(10000))
        answer += socket.readAll();
    return answer.left(answer.indexOf("\r\n"));
}

} // namespace

void TestAgentNginx::paymentThroughNginx()
{
    QString error;
    auto db = TestDatabase::start(Dialect::Sqlite, &error);
    QVERIFY2(db, qPrintable(error));
    AgentProcess::Options options;
    options.db = db->url();
    auto agent = AgentProcess::start(options, &error);
    QVERIFY2(agent, qPrintable(error));
    auto nginx = NginxFront::start(agent->port(), QStringLiteral(PAYONCE_SOURCE_DIR "/resources/nginx/payonce.conf"),
                                   &error);
    QVERIFY2(nginx, qPrintable(error));
    Client client(nginx->port(), nginx->certificatePath());

    // Readiness from the agent itself (its X-Trace-Id and body), over TLS through nginx.
    const Answer ready = client.send("GET", QStringLiteral("/readyz"));
    QVERIFY2(ready.status == 200, qPrintable(ready.describe() + QString::fromUtf8(nginx->logText())));
    QCOMPARE(ready.json().value(QStringLiteral("status")).toString(), QStringLiteral("ready"));
    QVERIFY(ready.reply->hasRawHeader("X-Trace-Id"));
    // /metrics is the agent's, for Prometheus on its own address; the front refuses it.
    QCOMPARE(client.send("GET", QStringLiteral("/metrics")).status, 404);
    QCOMPARE(httpCall(agent->port(), "GET", QStringLiteral("/metrics"), {}, {}).status, 200);

    // Set-up with the operator token, then the user's token and confirm — all via nginx.
    const Headers desk{{"Authorization", "Bearer desk-token"}};
    const Answer sku = client.send("PUT", QStringLiteral("/api/v1/skus/SKU-NGINX"), "{\"stock\": 10}", desk);
    QVERIFY2(sku.status == 200, qPrintable(sku.describe()));
    const QByteArray order = QJsonDocument(QJsonObject{
                                               {QStringLiteral("order_no"), QStringLiteral("ORD-NGINX")},
                                               {QStringLiteral("user_id"), 10086},
                                               {QStringLiteral("amount"), QStringLiteral("99.00")},
                                               {QStringLiteral("items"),
                                                QJsonArray{QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("SKU-NGINX")},
                                                                       {QStringLiteral("qty"), 1}}}}})
                                 .toJson(QJsonDocument::Compact);
    const Answer created = client.send("POST", QStringLiteral("/api/v1/orders"), order, desk);
    QVERIFY2(created.status == 201, qPrintable(created.describe()));

    const Headers user{{"X-User-Id", "10086"}};
    const Answer token = client.send("POST", QStringLiteral("/api/v1/payments/token"),
                                     "{\"order_no\":\"ORD-NGINX\"}", user);
    QVERIFY2(token.status == 201, qPrintable(token.describe()));
    const QString tokenText = token.json().value(QStringLiteral("token")).toString();
    QVERIFY(!tokenText.isEmpty());

    const QByteArray confirmBody = QJsonDocument(QJsonObject{{QStringLiteral("token"), tokenText},
                                                             {QStringLiteral("order_no"), QStringLiteral("ORD-NGINX")},
                                                             {QStringLiteral("channel"), QStringLiteral("wechat")}})
                                       .toJson(QJsonDocument::Compact);
    const Headers confirmHeaders{{"X-User-Id", "10086"}, {"Idempotency-Key", "nginx-confirm-1"}};
    const Answer confirm = client.send("POST", QStringLiteral("/api/v1/payments/confirm"), confirmBody, confirmHeaders);
    QVERIFY2(confirm.status == 200, qPrintable(confirm.describe() + QString::fromUtf8(nginx->logText())));
    QCOMPARE(confirm.json().value(QStringLiteral("status")).toString(), QStringLiteral("PAYING"));
    QVERIFY2(!confirm.json().value(QStringLiteral("code_url")).toString().isEmpty(), confirm.body.constData());
    QCOMPARE(confirm.reply->rawHeader("X-Payonce-Layer"), QByteArray("none"));

    // The client's retry through nginx: the stored answer, replayed by the agent.
    const Answer retry = client.send("POST", QStringLiteral("/api/v1/payments/confirm"), confirmBody, confirmHeaders);
    QVERIFY2(retry.status == 200, qPrintable(retry.describe()));
    QCOMPARE(retry.reply->rawHeader("Idempotent-Replayed"), QByteArray("true"));
    QCOMPARE(retry.json().value(QStringLiteral("payment_no")), confirm.json().value(QStringLiteral("payment_no")));
    qInfo("through nginx: readyz %d, confirm %d code_url %s, retry replayed", ready.status, confirm.status,
          qPrintable(confirm.json().value(QStringLiteral("code_url")).toString()));

    QVERIFY2(nginx->stop(), nginx->logText().constData());
    QCOMPARE(agent->stop(), 0);
}

void TestAgentNginx::streamThroughNginxOverWss()
{
    QString error;
    auto db = TestDatabase::start(Dialect::Sqlite, &error);
    QVERIFY2(db, qPrintable(error));
    AgentProcess::Options options;
    options.db = db->url();
    options.extraConfig = QJsonObject{{QStringLiteral("stream"), QJsonObject{{QStringLiteral("interval_ms"), 20}}}};
    auto agent = AgentProcess::start(options, &error);
    QVERIFY2(agent, qPrintable(error));
    auto nginx = NginxFront::start(agent->port(), QStringLiteral(PAYONCE_SOURCE_DIR "/resources/nginx/payonce.conf"),
                                   &error);
    QVERIFY2(nginx, qPrintable(error));

    // Without a token (or with an unknown one) the agent refuses the handshake; nginx passes
    // the refusal on, and no WebSocket is made.
    const QByteArray refused = handshakeStatusLine(nginx->port(), nginx->certificatePath(), "/api/v1/stream");
    QVERIFY2(refused.startsWith("HTTP/1.1 401"), refused.constData());
    const QByteArray unknown =
        handshakeStatusLine(nginx->port(), nginx->certificatePath(), "/api/v1/stream?access_token=no-such-token");
    QVERIFY2(unknown.startsWith("HTTP/1.1 401"), unknown.constData());

    // A viewer's token in the query (browsers cannot set headers on a WebSocket), over wss.
    QList<payonce::StreamMessage> messages;
    QStringList errors;
    QWebSocket socket;
    QObject::connect(&socket, &QWebSocket::textMessageReceived, [&](const QString &text) {
        QString why;
        if (auto decoded = payonce::decodeStreamMessage(text.toUtf8(), &why))
            messages.append(*decoded);
        else
            errors << why;
    });
    QObject::connect(&socket, &QWebSocket::sslErrors, [&](const QList<QSslError> &sslErrors) {
        for (const QSslError &e : sslErrors)
            errors << e.errorString();
    });
    QNetworkRequest request(
        QUrl(QStringLiteral("wss://127.0.0.1:%1/api/v1/stream?access_token=view-token").arg(nginx->port())));
    // QWebSocket takes its TLS settings from itself, not from the request.
    socket.setSslConfiguration(trustingOnly(nginx->certificatePath()));
    socket.open(request);
    QTRY_VERIFY2_WITH_TIMEOUT(messages.size() >= 3, qPrintable(errors.join(u'\n') + socket.errorString()), 30000);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
    const auto *snapshot = std::get_if<payonce::StreamSnapshot>(&messages.first().body);
    QVERIFY(snapshot);
    QVERIFY(!snapshot->breakers.isEmpty());
    QVERIFY(std::holds_alternative<payonce::StreamMetrics>(messages.at(1).body));
    for (qsizetype i = 0; i < messages.size(); ++i)
        QCOMPARE(messages.at(i).seq, qint64(i + 1));
    const auto duplicatesAt = [&](payonce::Layer layer) -> qint64 {
        for (auto it = messages.crbegin(); it != messages.crend(); ++it) {
            if (const auto *m = std::get_if<payonce::StreamMetrics>(&it->body))
                return m->duplicates.value(layer);
        }
        return -1;
    };
    const qint64 before = duplicatesAt(payonce::Layer::IdempotencyKey);
    QVERIFY(before >= 0);

    // A confirm and three replays of it through nginx: the streamed idempotency_key count
    // moves by exactly three.
    Client client(nginx->port(), nginx->certificatePath());
    QString setupError;
    QVERIFY2(agent->createOrder(QStringLiteral("ORD-NGINX-WSS"), 10087, QStringLiteral("5.00"), QStringLiteral("SKU-NGINX-WSS"),
                                &setupError),
             qPrintable(setupError));
    const Answer token =
        client.send("POST", QStringLiteral("/api/v1/payments/token"), "{\"order_no\":\"ORD-NGINX-WSS\"}", {{"X-User-Id", "10087"}});
    QVERIFY2(token.status == 201, qPrintable(token.describe()));
    const QByteArray confirmBody = QJsonDocument(QJsonObject{{QStringLiteral("token"), token.json().value(QStringLiteral("token"))},
                                                             {QStringLiteral("order_no"), QStringLiteral("ORD-NGINX-WSS")},
                                                             {QStringLiteral("channel"), QStringLiteral("wechat")}})
                                       .toJson(QJsonDocument::Compact);
    const Headers confirmHeaders{{"X-User-Id", "10087"}, {"Idempotency-Key", "nginx-wss-1"}};
    for (int i = 0; i < 4; ++i) {
        const Answer confirm = client.send("POST", QStringLiteral("/api/v1/payments/confirm"), confirmBody, confirmHeaders);
        QVERIFY2(confirm.status == 200, qPrintable(confirm.describe()));
        QCOMPARE(confirm.reply->rawHeader("X-Payonce-Layer"), i == 0 ? QByteArray("none") : QByteArray("idempotency_key"));
    }
    QTRY_COMPARE_WITH_TIMEOUT(duplicatesAt(payonce::Layer::IdempotencyKey), before + 3, 30000);
    const qint64 seqNow = messages.last().seq;
    QTRY_VERIFY_WITH_TIMEOUT(messages.last().seq >= seqNow + 5, 30000); // and it stays there
    QCOMPARE(duplicatesAt(payonce::Layer::IdempotencyKey), before + 3);
    for (qsizetype i = 0; i < messages.size(); ++i)
        QCOMPARE(messages.at(i).seq, qint64(i + 1));
    qInfo("wss through nginx: %lld messages, idempotency_key %lld -> %lld", qint64(messages.size()), before,
          duplicatesAt(payonce::Layer::IdempotencyKey));

    socket.close();
    QVERIFY2(nginx->stop(), nginx->logText().constData());
    QCOMPARE(agent->stop(), 0);
}

QTEST_GUILESS_MAIN(TestAgentNginx)
#include "tst_agentnginx.moc"
