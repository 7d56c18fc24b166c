// resources/nginx/payonce.conf (included unchanged) in front of the REAL payonce-agent,
// with payonce-sim beside it: https through nginx to /readyz, and a whole payment set-up
// and confirm (operator token, user header, Idempotency-Key) proxied to the agent; the live
// stream over wss through nginx, trusting the test certificate as the only CA; the
// failed-authentication limiter behind nginx (http.trusted_proxies), per client address.
#include "agentconfig.h"
#include "agentfixture.h"
#include "httptestsupport.h"
#include "serverharness.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
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
    void failedTokensNeverLockTheDeskOut();
};

namespace {

struct Answer {
    int status = 0;
    QByteArray body;
    QString error;
    std::unique_ptr<QNetworkReply> reply;
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    QString describe() const { return QStringLiteral("%1 %2 %3").arg(status).arg(QString::fromUtf8(body), error); }
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
QByteArray handshakeStatusLine(int port, const QString &caPath, const QByteArray &target,
                               const QByteArray &authorization = {})
{
    QSslSocket socket;
    socket.setSslConfiguration(trustingOnly(caPath));
    socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForEncrypted(10000))
        return "no TLS: " + socket.errorString().toUtf8();
    socket.write("GET " + target
                 + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 + (authorization.isEmpty() ? QByteArray() : "Authorization: " + authorization + "\r\n") + "\r\n");
    QByteArray answer;
    while (!answer.contains("\r\n") && socket.waitForReadyRead(10000))
        answer += socket.readAll();
    return answer.left(answer.indexOf("\r\n"));
}

/// The status of one request over TLS to nginx from the loopback address `source`, with
/// `Authorization: <authorization>` unless it is empty, plus any extra header lines.
int statusThroughNginx(const NginxFront &nginx, const char *source, const QByteArray &target,
                       const QByteArray &authorization, const QByteArray &extraHeaders = {})
{
    QByteArray request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extraHeaders;
    if (!authorization.isEmpty())
        request += "Authorization: " + authorization + "\r\n";
    request += "\r\n";
    return httpStatusOf(
        httpsExchangeFrom(QHostAddress(QLatin1String(source)), nginx.port(), nginx.certificatePath(), request));
}

} // namespace

void TestAgentNginx::paymentThroughNginx()
{
    QString error;
    AgentProcess::Options options;
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
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
    const Answer sku = client.send("PUT", QStringLiteral("/api/v1/skus/SKU-NGINX"), "{\"stock\": 10}", kDesk);
    QVERIFY2(sku.status == 200, qPrintable(sku.describe()));
    const QByteArray order =
        QJsonDocument(QJsonObject{{QStringLiteral("order_no"), QStringLiteral("ORD-NGINX")},
                                  {QStringLiteral("user_id"), 10086},
                                  {QStringLiteral("amount"), QStringLiteral("99.00")},
                                  {QStringLiteral("items"),
                                   QJsonArray{QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("SKU-NGINX")},
                                                          {QStringLiteral("qty"), 1}}}}})
            .toJson(QJsonDocument::Compact);
    const Answer created = client.send("POST", QStringLiteral("/api/v1/orders"), order, kDesk);
    QVERIFY2(created.status == 201, qPrintable(created.describe()));

    const Headers user{{"X-User-Id", "10086"}};
    const Answer token = client.send("POST", QStringLiteral("/api/v1/payments/token"), "{\"order_no\":\"ORD-NGINX\"}",
                                     user);
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
    agent.stop();
}

void TestAgentNginx::streamThroughNginxOverWss()
{
    QString error;
    AgentProcess::Options options;
    options.extraConfig = QJsonObject{streamEvery(20)};
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
    auto nginx = NginxFront::start(agent->port(), QStringLiteral(PAYONCE_SOURCE_DIR "/resources/nginx/payonce.conf"),
                                   &error);
    QVERIFY2(nginx, qPrintable(error));

    // Without a token (or with an unknown one) the agent refuses the handshake; nginx passes
    // the refusal on, and no WebSocket is made.
    const QByteArray refused = handshakeStatusLine(nginx->port(), nginx->certificatePath(), "/api/v1/stream");
    QVERIFY2(refused.startsWith("HTTP/1.1 401"), refused.constData());
    const QByteArray unknown = handshakeStatusLine(nginx->port(), nginx->certificatePath(), "/api/v1/stream",
                                                   "Bearer no-such-token");
    QVERIFY2(unknown.startsWith("HTTP/1.1 401"), unknown.constData());
    // A token in the query is refused, a valid one too: the stream takes it in the header only.
    const QByteArray inQuery = handshakeStatusLine(nginx->port(), nginx->certificatePath(),
                                                   "/api/v1/stream?access_token=view-token");
    QVERIFY2(inQuery.startsWith("HTTP/1.1 401"), inQuery.constData());

    // A viewer's token in the upgrade request's Authorization header, over wss.
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
    QNetworkRequest request(QUrl(QStringLiteral("wss://127.0.0.1:%1/api/v1/stream").arg(nginx->port())));
    request.setRawHeader("Authorization", "Bearer view-token");
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
    QVERIFY2(agent->createOrder(QStringLiteral("ORD-NGINX-WSS"), 10087, QStringLiteral("5.00"),
                                QStringLiteral("SKU-NGINX-WSS"), &setupError),
             qPrintable(setupError));
    const Answer token = client.send("POST", QStringLiteral("/api/v1/payments/token"),
                                     "{\"order_no\":\"ORD-NGINX-WSS\"}", {{"X-User-Id", "10087"}});
    QVERIFY2(token.status == 201, qPrintable(token.describe()));
    const QByteArray confirmBody =
        QJsonDocument(QJsonObject{{QStringLiteral("token"), token.json().value(QStringLiteral("token"))},
                                  {QStringLiteral("order_no"), QStringLiteral("ORD-NGINX-WSS")},
                                  {QStringLiteral("channel"), QStringLiteral("wechat")}})
            .toJson(QJsonDocument::Compact);
    const Headers confirmHeaders{{"X-User-Id", "10087"}, {"Idempotency-Key", "nginx-wss-1"}};
    for (int i = 0; i < 4; ++i) {
        const Answer confirm = client.send("POST", QStringLiteral("/api/v1/payments/confirm"), confirmBody,
                                           confirmHeaders);
        QVERIFY2(confirm.status == 200, qPrintable(confirm.describe()));
        QCOMPARE(confirm.reply->rawHeader("X-Payonce-Layer"),
                 i == 0 ? QByteArray("none") : QByteArray("idempotency_key"));
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
    // No stream token reaches nginx's logs (the agent logs the stream it opened, by the
    // token's name): not the one tried in the query, not the unknown one.
    const QByteArray logs = nginx->accessLogText() + nginx->logText();
    QVERIFY2(logs.contains("/api/v1/payments/confirm"), logs.constData()); // the log is written at all
    QVERIFY2(!logs.contains("view-token") && !logs.contains("no-such-token") && !logs.contains("access_token"),
             logs.constData());
    agent.stop();
}

// Behind nginx every connection comes from nginx's address. With http.trusted_proxies
// naming it, the agent takes the client from X-Forwarded-For, and its limiter slows only
// that client's failed tokens: the desk's own token is answered from any address, the one
// that failed included, however many failures came before it.
void TestAgentNginx::failedTokensNeverLockTheDeskOut()
{
    QString error;
    AgentProcess::Options options;
    options.extraConfig = QJsonObject{
        {QStringLiteral("http"),
         QJsonObject{{QStringLiteral("trusted_proxies"), QJsonArray{QStringLiteral("127.0.0.1/32")}}}}};
    AgentFixture agent;
    QVERIFY2(agent.start(Dialect::Sqlite, options), agent.error());
    auto nginx = NginxFront::start(agent->port(), QStringLiteral(PAYONCE_SOURCE_DIR "/resources/nginx/payonce.conf"),
                                   &error);
    QVERIFY2(nginx, qPrintable(error));

    // 50 requests from 127.0.0.2: wrong tokens, no token, and "Bearer" alone on an operator
    // route, with public routes (no token needed, none sent) in between.
    const char *attacker = "127.0.0.2";
    const QByteArray breakers = "/api/v1/breakers";
    QMap<int, int> statuses;
    int publicAnswered = 0;
    for (int i = 0; i < 50; ++i) {
        QByteArray authorization;
        switch (i % 3) {
        case 0: authorization = "Bearer wrong-" + QByteArray::number(i); break;
        case 1: break;
        case 2: authorization = "Bearer"; break;
        }
        ++statuses[statusThroughNginx(*nginx, attacker, breakers, authorization)];
        if (i % 10 == 0 && statusThroughNginx(*nginx, attacker, "/readyz", {}) == 200)
            ++publicAnswered;
    }
    qInfo() << "50 bad or missing tokens from" << attacker << "answered:" << statuses;
    QCOMPARE(statuses.value(401) + statuses.value(429), 50);
    QVERIFY2(statuses.value(429) > 0, "the limiter never slowed the failing address");
    QCOMPARE(publicAnswered, 5); // public routes are not failures and never limited

    // The desk's token: from another address, and from the failing one — both answered.
    QCOMPARE(statusThroughNginx(*nginx, "127.0.0.3", breakers, "Bearer desk-token"), 200);
    QCOMPARE(statusThroughNginx(*nginx, attacker, breakers, "Bearer desk-token"), 200);
    // The other address has failures of its own to spend; the failing one is still slowed,
    // even when it names another client in X-Forwarded-For (nginx appends the real one).
    QCOMPARE(statusThroughNginx(*nginx, "127.0.0.3", breakers, "Bearer wrong"), 401);
    QCOMPARE(statusThroughNginx(*nginx, attacker, breakers, "Bearer wrong", "X-Forwarded-For: 127.0.0.9\r\n"), 429);

    // Counted: the refusals in payonce_auth_refused_total, the wrong tokens by reason.
    const auto metrics = parseMetricSamples(httpCall(agent->port(), "GET", QStringLiteral("/metrics"), {}, {}).body);
    const double refused = metrics.count(QStringLiteral("payonce_auth_refused_total"))
                               ? metrics.at(QStringLiteral("payonce_auth_refused_total"))
                               : -1;
    QCOMPARE(refused, double(statuses.value(429) + 1));
    qInfo("limiter: %d of 50 answered 429 from %s, payonce_auth_refused_total %.0f; desk token 200 from both",
          statuses.value(429), attacker, refused);

    QVERIFY2(nginx->stop(), nginx->logText().constData());
    agent.stop();
}

QTEST_GUILESS_MAIN(TestAgentNginx)
#include "tst_agentnginx.moc"
