// Bearer-token roles: the constant-time compare, the Authenticator, the failed-auth
// limiter (driven clock), the client address behind trusted proxies, and the same rules
// over HTTP against payonce-http-testserver (tokens "viewer-token" and "operator-token";
// 5 failures a minute per address).
#include "httptestsupport.h"

#include "http/authenticator.h"
#include "http/clientaddress.h"

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
    void clientAddress_data();
    void clientAddress();
    void trustedProxiesParse();
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
        {QStringLiteral("vera"), QStringLiteral("viewer"),
         payonce::config::Secret(QString::fromLatin1(http::sha256Hex("viewer-token")))},
        // Upper-case hex in the config works too.
        {QStringLiteral("otto"), QStringLiteral("operator"),
         payonce::config::Secret(QString::fromLatin1(http::sha256Hex("operator-token").toUpper()))},
        {QStringLiteral("bad"), QStringLiteral("root"),
         payonce::config::Secret(QString::fromLatin1(http::sha256Hex("root-token")))},
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
    QCOMPARE(retryAfter, 40);               // the failure at 0 leaves the window at 60 s
    QVERIFY(!limiter.isBlocked(b, 20'000)); // per address
    QVERIFY(!limiter.isBlocked(a, 60'001)); // the oldest left the window
    QCOMPARE(limiter.failuresTotal(), quint64(3));
}

void TestHttpAuth::clientAddress_data()
{
    QTest::addColumn<QString>("peer");
    QTest::addColumn<QByteArrayList>("forwardedFor");
    QTest::addColumn<QString>("client");
    const QByteArrayList none;
    QTest::newRow("untrusted peer ignores the header") << "203.0.113.7" << QByteArrayList{"10.9.9.9"} << "203.0.113.7";
    QTest::newRow("trusted peer, no header") << "127.0.0.1" << none << "127.0.0.1";
    QTest::newRow("trusted peer, one hop") << "127.0.0.1" << QByteArrayList{"198.51.100.4"} << "198.51.100.4";
    QTest::newRow("forged left part skipped")
        << "127.0.0.1" << QByteArrayList{"1.2.3.4, 198.51.100.4"} << "198.51.100.4";
    QTest::newRow("trusted hops skipped") << "127.0.0.1" << QByteArrayList{"198.51.100.4, 10.1.2.3"} << "198.51.100.4";
    QTest::newRow("several headers, in order")
        << "127.0.0.1" << QByteArrayList{"1.2.3.4", "198.51.100.4"} << "198.51.100.4";
    QTest::newRow("only trusted hops: the leftmost")
        << "127.0.0.1" << QByteArrayList{"10.0.0.5, 10.1.2.3"} << "10.0.0.5";
    QTest::newRow("garbage stops at the last trusted")
        << "127.0.0.1" << QByteArrayList{"198.51.100.4, unknown, 10.1.2.3"} << "10.1.2.3";
    QTest::newRow("ipv4-mapped peer") << "::ffff:127.0.0.1" << QByteArrayList{"198.51.100.4"} << "198.51.100.4";
    QTest::newRow("ipv6 hop") << "::1" << QByteArrayList{"2001:db8::7"} << "2001:db8::7";
}

void TestHttpAuth::clientAddress()
{
    QFETCH(QString, peer);
    QFETCH(QByteArrayList, forwardedFor);
    QFETCH(QString, client);
    QString bad;
    const auto proxies = http::TrustedProxies::parse(
        {QStringLiteral("127.0.0.1/32"), QStringLiteral("10.0.0.0/8"), QStringLiteral("::1")}, &bad);
    QVERIFY2(proxies, qPrintable(bad));
    QCOMPARE(proxies->clientAddress(QHostAddress(peer), forwardedFor), QHostAddress(client));
    // Without trusted proxies nobody's header is believed.
    QCOMPARE(http::TrustedProxies().clientAddress(QHostAddress(QStringLiteral("127.0.0.1")), forwardedFor),
             QHostAddress(QStringLiteral("127.0.0.1")));
}

void TestHttpAuth::trustedProxiesParse()
{
    QString bad;
    QVERIFY(http::TrustedProxies::parse(
        {QStringLiteral("192.168.0.0/16"), QStringLiteral(" ::1/128 "), QStringLiteral("10.0.0.1")}, &bad));
    for (const char *text : {"", "localhost", "10.0.0.0/33", "10.0.0.0/", "nginx/8", "1.2.3.4/8/8"}) {
        bad.clear();
        QVERIFY2(!http::TrustedProxies::parse({QStringLiteral("127.0.0.1"), QLatin1String(text)}, &bad), text);
        QCOMPARE(bad, QLatin1String(text));
    }
}

void TestHttpAuth::overHttp_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("bodyContains");
    QTest::addColumn<QByteArray>("layer");
    const QByteArray viewerRoute = "GET /viewer-only HTTP/1.1\r\nHost: t\r\n";
    const QByteArray operatorRoute = "POST /operator-only HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n";
    QTest::newRow("no token 401") << viewerRoute + "\r\n"
                                  << 401 << QByteArray("\"code\":\"unauthenticated\"") << QByteArray();
    QTest::newRow("unknown token 401") << viewerRoute + "Authorization: Bearer wrong\r\n\r\n"
                                       << 401 << QByteArray("\"code\":\"unauthenticated\"") << QByteArray();
    QTest::newRow("viewer on viewer route") << viewerRoute + "Authorization: Bearer viewer-token\r\n\r\n"
                                            << 200 << QByteArray("\"actor\":\"vera\"") << QByteArray();
    QTest::newRow("operator on viewer route") << viewerRoute + "Authorization: Bearer operator-token\r\n\r\n"
                                              << 200 << QByteArray("\"actor\":\"otto\"") << QByteArray();
    QTest::newRow("viewer on operator route 403") << operatorRoute + "Authorization: Bearer viewer-token\r\n\r\n{}"
                                                  << 403 << QByteArray("operator") << QByteArray("rejected");
    QTest::newRow("no token on operator route, layer kept")
        << operatorRoute + "\r\n{}" << 401 << QByteArray("unauthenticated") << QByteArray("rejected");
    QTest::newRow("operator allowed, handler's layer")
        << operatorRoute + "Authorization: Bearer operator-token\r\n\r\n{}" << 200 << QByteArray("\"actor\":\"otto\"")
        << QByteArray("none");
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
    // A missing token guesses nothing: 401 however often, never counted against the address.
    for (int i = 0; i < 8; ++i) {
        QCOMPARE(httpStatusOf(httpExchange(server->port(), "GET /viewer-only HTTP/1.1\r\nHost: t\r\n\r\n")), 401);
        QCOMPARE(httpStatusOf(httpExchange(server->port(),
                                           "GET /viewer-only HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \r\n\r\n")),
                 401);
    }
    for (int i = 0; i < 5; ++i)
        QCOMPARE(httpStatusOf(httpExchange(server->port(), wrong)), 401);
    const QByteArray limited = httpExchange(server->port(), wrong);
    QCOMPARE(httpStatusOf(limited), 429);
    QVERIFY(httpBodyOf(limited).contains("\"code\":\"too_many_requests\""));
    const int retryAfter = httpHeaderOf(limited, "retry-after").toInt();
    QVERIFY2(retryAfter >= 1 && retryAfter <= 60, httpHeaderOf(limited, "retry-after").constData());
    // A valid token from that address is answered: the limiter never locks a token's owner
    // out because someone else (behind the same proxy, or the same NAT) guessed.
    QCOMPARE(httpStatusOf(httpExchange(
                 server->port(), "GET /viewer-only HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer viewer-token\r\n\r\n")),
             200);
    QCOMPARE(httpStatusOf(httpExchange(server->port(), wrong)), 429);
    // Routes without a token are not limited.
    QCOMPARE(httpStatusOf(httpExchange(server->port(), "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")), 200);
    QCOMPARE(server->terminate(), 0);
    QVERIFY2(server->output().contains(QStringLiteral("auth failures 5, 429 2")), qPrintable(server->output()));
}

QTEST_GUILESS_MAIN(TestHttpAuth)
#include "tst_httpauth.moc"
