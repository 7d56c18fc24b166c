// resources/nginx/payonce.conf (included unchanged) in front of the REAL payonce-agent,
// with payonce-sim beside it: https through nginx to /readyz, and a whole payment set-up
// and confirm (operator token, user header, Idempotency-Key) proxied to the agent.
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
#include <QTest>

using namespace payonce::testsupport;

class TestAgentNginx : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void paymentThroughNginx();
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

QTEST_GUILESS_MAIN(TestAgentNginx)
#include "tst_agentnginx.moc"
