// Bearer-token roles: the constant-time compare, the Authenticator, the failed-auth
// limiter (driven clock), and the same rules over HTTP against payonce-http-testserver
// (tokens "viewer-token" and "operator-token"; 5 failures a minute per address).
#include "httptestsupport.h"

#include "http/authenticator.h"

#include <QTest>

using namespace payonce::testsupport;
namespace http = payonce::http;

class TestHttpAuth : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void constantTimeEquals_data();
    void constantTimeEquals();
    void authenticator_data();
    void authenticator();
    void limiter();
    void overHttp_data();
    void overHttp();
    void failedAuthenticationsRateLimited();
};

void TestHttpAuth::constantTimeEquals_data()
{
    QTest::addColumn<QByteArray>("a");
    QTest::addColumn<QByteArray>("b");
    QTest::addColumn<bool>("equal");
    QTest::newRow("same") << QByteArray("abcdef") << QByteArray("abcdef") << true;
    QTest::newRow("empty") << QByteArray() << QByteArray("") << true;
    QTest::newRow("first byte") << QByteArray("xbcdef") << QByteArray("abcdef") << false;
    QTest::newRow("last byte") << QByteArray("abcdex") << QByteArray("abcdef") << false;
    QTest::newRow("shorter") << QByteArray("abcde") << QByteArray("abcdef") << false;
    QTest::newRow("one bit") << QByteArray("\x01", 1) << QByteArray("\x00", 1) << false;
}

void TestHttpAuth::constantTimeEquals()
{
    QFETCH(QByteArray, a);
    QFETCH(QByteArray, b);
    QFETCH(bool, equal);
    QCOMPARE(http::constantTimeEquals(a, b), equal);
    QCOMPARE(http::constantTimeEquals(b, a), equal);
}

void TestHttpAuth::authenticator_data()
{
    QTest::addColumn<QByteArray>("authorization");
    QTest::addColumn<QString>("name"); // empty: refused
    QTest::newRow("none") << QByteArray() << QString();
    QTest::newRow("not bearer") << QByteArray("Basic dmlld2VyLXRva2Vu") << QString();
    QTest::newRow("unknown") << QByteArray("Bearer nope") << QString();
    QTest::newRow("empty token") << QByteArray("Bearer ") << QString();
    QTest::newRow("viewer") << QByteArray("Bearer viewer-token") << QStringLiteral("vera");
    QTest::newRow("scheme any case") << QByteArray("bearer operator-token") << QStringLiteral("otto");
}

void TestHttpAuth::authenticator()
{
    QFETCH(QByteArray, authorization);
    QFETCH(QString, name);
    const http::Authenticator auth({
        {QStringLiteral("vera"), QStringLiteral("viewer"), payonce::config::Secret(QString::fromLatin1(http::sha256Hex("viewer-token")))},
        // Upper-case hex in the config works too.
        {QStringLiteral("otto"), QStringLiteral("operator"), payonce::config::Secret(QString::fromLatin1(http::sha256Hex("operator-token").toUpper()))},
        {QStringLiteral("bad"), QStringLiteral("root"), payonce::config::Secret(QString::fromLatin1(http::sha256Hex("root-token")))},
    });
    QCOMPARE(auth.tokenCount(), 2);
    const auto principal = auth.authenticate(authorization);
    QCOMPARE(principal.has_value(), !name.isEmpty());
    if (principal)
        QCOMPARE(principal->name, name);
}

void TestHttpAuth::limiter()
{
    http::AuthFailureLimiter limiter(3, std::chrono::seconds(60));
    const QHostAddress a(QStringLiteral("10.0.0.1"));
    const QHostAddress b(QStringLiteral("10.0.0.2"));
    QVERIFY(!limiter.isBlocked(a, qint64(0)));
    QCOMPARE(limiter.recordFailure(a, 0), 1);
    QCOMPARE(limiter.recordFailure(a, 10'000), 2);
    QVERIFY(!limiter.isBlocked(a, 10'000));
    QCOMPARE(limiter.recordFailure(a, 20'000), 3);
    int retryAfter = 0;
    QVERIFY(limiter.isBlocked(a, 20'000, &retryAfter));
    QCOMPARE(retryAfter, 40); // the failure at 0 leaves the window at 60 s
    QVERIFY(!limiter.isBlocked(b, 20'000)); // per address
    QVERIFY(!limiter.isBlocked(a, 60'001)); // the oldest left the window
    QCOMPARE(limiter.failuresTotal(), quint64(3));
}

void TestHttpAuth::overHttp_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("bodyContains");
    QTest::addColumn<QByteArray>("layer");
    const QByteArray viewerRoute = "GET /viewer-only HTTP/1.1\r\nHost: t\r\n";
    const QByteArray operatorRoute = "POST /operator-only HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n";
    QTest::newRow("no token 401") << viewerRoute + "\r\n" << 401 << QByteArray("\"code\":\"unauthenticated\"") << QByteArray();
    QTest::newRow("unknown token 401") << viewerRoute + "Authorization: Bearer wrong\r\n\r\n" << 401
                                       << QByteArray("\"code\":\"unauthenticated\"") << QByteArray();
    QTest::newRow("viewer on viewer route") << viewerRoute + "Authorization: Bearer viewer-token\r\n\r\n" << 200
                                            << QByteArray("\"actor\":\"vera\"") << QByteArray();
    QTest::newRow("operator on viewer route") << viewerRoute + "Authorization: Bearer operator-token\r\n\r\n" << 200
                                              << QByteArray("\"actor\":\"otto\"") << QByteArray();
    QTest::newRow("viewer on operator route 403")
        << operatorRoute + "Authorization: Bearer viewer-token\r\n\r\n{}" << 403 << QByteArray("operator")
        << QByteArray("rejected");
    QTest::newRow("no token on operator route, layer kept") << operatorRoute + "\r\n{}" << 401
                                                            << QByteArray("unauthenticated") << QByteArray("rejected");
    QTest::newRow("operator allowed, handler's layer") << operatorRoute + "Authorization: Bearer operator-token\r\n\r\n{}"
                                                       << 200 << QByteArray("\"actor\":\"otto\"") << QByteArray("none");
}

void TestHttpAuth::overHttp()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QByteArray, bodyContains);
    QFETCH(QByteArray, layer);
    QString error;
    static std::unique_ptr<HttpTestServer> server = HttpTestServer::start({}, &error);
    QVERIFY2(server, qPrintable(error));
    const QByteArray response = httpExchange(server->port(), request);
    QCOMPARE(httpStatusOf(response), status);
    QVERIFY2(httpBodyOf(response).contains(bodyContains), response.constData());
    QCOMPARE(httpHeaderOf(response, "x-payonce-layer"), layer);
}

void TestHttpAuth::failedAuthenticationsRateLimited()
{
    QString error;
    auto server = HttpTestServer::start({}, &error);
    QVERIFY2(server, qPrintable(error));
    const QByteArray wrong = "GET /viewer-only HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer wrong\r\n\r\n";
    for (int i = 0; i < 5; ++i)
        QCOMPARE(httpStatusOf(httpExchange(server->port(), wrong)), 401);
    const QByteArray limited = httpExchange(server->port(), wrong);
    QCOMPARE(httpStatusOf(limited), 429);
    QVERIFY(httpBodyOf(limited).contains("\"code\":\"too_many_requests\""));
    const int retryAfter = httpHeaderOf(limited, "retry-after").toInt();
    QVERIFY2(retryAfter >= 1 && retryAfter <= 60, httpHeaderOf(limited, "retry-after").constData());
    // Even a valid token from that address waits: the limiter does not help guessing.
    QCOMPARE(httpStatusOf(httpExchange(server->port(),
                                       "GET /viewer-only HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer viewer-token\r\n\r\n")),
             429);
    // Routes without a token are not limited.
    QCOMPARE(httpStatusOf(httpExchange(server->port(), "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")), 200);
    QCOMPARE(server->terminate(), 0);
    QVERIFY2(server->output().contains(QStringLiteral("auth failures 5, 429 2")), qPrintable(server->output()));
}

QTEST_GUILESS_MAIN(TestHttpAuth)
#include "tst_httpauth.moc"
