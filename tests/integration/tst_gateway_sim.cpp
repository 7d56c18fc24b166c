// The real WeChat Pay and Alipay clients against payonce-sim, started as a child process
// on a free loopback port: signatures both ways, idempotent creation, query and close
// semantics, and the faults (tampered answers, errors, hangs) mapped as the port promises.

#include "gateway/blockinghttp.h"
#include "gateway/gatewayfactory.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce;
using namespace payonce::gateway;

namespace {

constexpr int kClientTimeoutMs = 5000;
constexpr int kShortTimeoutMs = 800;
// Process and connection set-up on a loaded 2-core machine: what separates "gave up at the
// timeout" from "hung".
constexpr int kSlackMs = 2500;

const QString kMchid = QStringLiteral("1900000001");
const QString kAppid = QStringLiteral("wx0000000000000000");
const QString kAlipayAppId = QStringLiteral("2021000000000000");

QString fixture(const char *name)
{
    return QStringLiteral(PAYONCE_FIXTURES_DIR "/crypto/") + QString::fromLatin1(name);
}

} // namespace

class TestGatewaySim : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanupTestCase();

    void createIsIdempotent_data() { channels(); }
    void createIsIdempotent();
    void queryNotPaidThenPaid_data() { channels(); }
    void queryNotPaidThenPaid();
    void closeIsIdempotent_data() { channels(); }
    void closeIsIdempotent();
    void wrongMerchantKeyIsRefused_data() { channels(); }
    void wrongMerchantKeyIsRefused();
    void tamperedResponsesAreBadSignature_data() { channels(); }
    void tamperedResponsesAreBadSignature();
    void errorsAreUnavailable_data() { channels(); }
    void errorsAreUnavailable();
    void hangAndLatencyEndAtTheTimeout_data();
    void hangAndLatencyEndAtTheTimeout();
    void factoryRefusesBadKeys();

private:
    static void channels()
    {
        QTest::addColumn<core::Channel>("channel");
        QTest::newRow("wechat") << core::Channel::WeChat;
        QTest::newRow("alipay") << core::Channel::Alipay;
    }
    std::unique_ptr<core::PaymentGateway> makeGateway(core::Channel channel, int timeoutMs = kClientTimeoutMs,
                                                      const QString &merchantKey = fixture("merchant_key.pem"));
    QJsonObject control(const QByteArray &method, const QString &path, const QJsonObject &body = {});
    void setFaults(core::Channel channel, const QJsonObject &faults);
    int stat(const char *group, core::Channel channel);
    core::GatewayOrderRequest orderRequest(core::Channel channel);

    QTemporaryDir m_dir;
    QProcess m_sim;
    int m_port = 0;
    QByteArray m_platformPem;
    int m_counter = 0;
};

void TestGatewaySim::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_port = testsupport::freeLoopbackPort();
    QVERIFY(m_port > 0);
    const QString keyOut = m_dir.filePath(QStringLiteral("platform.pem"));
    m_sim.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_sim.start(QStringLiteral(PAYONCE_SIM_PATH),
                {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(m_port),
                 QStringLiteral("--merchant-public-key"), fixture("merchant_pub.pem"),
                 QStringLiteral("--mchid"), kMchid, QStringLiteral("--appid"), kAppid,
                 QStringLiteral("--alipay-app-id"), kAlipayAppId,
                 QStringLiteral("--platform-key-out"), keyOut, QStringLiteral("--exit-with-parent")});
    QVERIFY2(m_sim.waitForStarted(10000), qPrintable(m_sim.errorString()));
    QElapsedTimer waited;
    waited.start();
    // The key file is written (atomically) only once the server listens.
    while (!QFile::exists(keyOut) && waited.elapsed() < 30000 && m_sim.state() == QProcess::Running)
        QTest::qWait(50);
    QVERIFY2(QFile::exists(keyOut), qPrintable(QStringLiteral("payonce-sim not ready: ") + QString::fromLocal8Bit(m_sim.readAllStandardOutput())));
    QFile key(keyOut);
    QVERIFY(key.open(QIODevice::ReadOnly));
    m_platformPem = key.readAll();
    QVERIFY(m_platformPem.startsWith("-----BEGIN PUBLIC KEY-----"));
    // The control endpoint serves the same key.
    QCOMPARE(control("GET", QStringLiteral("/sim/platform-key")).value(u"public_key_pem").toString().toLatin1(), m_platformPem);
}

void TestGatewaySim::init()
{
    QVERIFY(control("POST", QStringLiteral("/sim/reset")).value(u"reset").toBool());
}

void TestGatewaySim::cleanupTestCase()
{
    if (m_sim.state() == QProcess::NotRunning)
        return;
    m_sim.terminate(); // SIGTERM: must end cleanly
    const bool finished = m_sim.waitForFinished(10000);
    if (!finished) {
        m_sim.kill();
        m_sim.waitForFinished();
    }
    QVERIFY2(finished, "payonce-sim ignored SIGTERM");
    QCOMPARE(m_sim.exitStatus(), QProcess::NormalExit);
    QCOMPARE(m_sim.exitCode(), 0);
}

std::unique_ptr<core::PaymentGateway> TestGatewaySim::makeGateway(core::Channel channel, int timeoutMs, const QString &merchantKey)
{
    GatewayFactoryOptions options;
    options.timeoutMs = timeoutMs;
    options.baseUrlOverride = QStringLiteral("http://127.0.0.1:%1").arg(m_port);
    options.extraPlatformKeys = {{QStringLiteral("PAYONCE_SIM_0001"), m_platformPem}};
    if (channel == core::Channel::WeChat) {
        config::WeChatSettings settings;
        settings.mchid = kMchid;
        settings.appid = kAppid;
        settings.merchantSerial = QStringLiteral("MERCHANT_SERIAL_01");
        settings.merchantPrivateKeyPath = merchantKey;
        // A second trusted key under another serial: the response's serial must pick.
        settings.platformKeys = {{QStringLiteral("OTHER_PLATFORM_KEY"), fixture("platform_pub.pem")}};
        auto gateway = makeWeChatPayGateway(settings, options);
        if (!gateway)
            qFatal("%s", qPrintable(gateway.error().internalMessage));
        return std::move(gateway).value();
    }
    // The sim's platform key signs Alipay answers too: write it where the settings expect a file.
    const QString alipayKeyPath = m_dir.filePath(QStringLiteral("alipay_public.pem"));
    QFile file(alipayKeyPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(m_platformPem) < 0)
        qFatal("cannot write %s", qPrintable(alipayKeyPath));
    file.close();
    config::AlipaySettings settings;
    settings.appId = kAlipayAppId;
    settings.sellerId = QStringLiteral("2088000000000000");
    settings.privateKeyPath = merchantKey;
    settings.alipayPublicKeyPath = alipayKeyPath;
    auto gateway = makeAlipayGateway(settings, options);
    if (!gateway)
        qFatal("%s", qPrintable(gateway.error().internalMessage));
    return std::move(gateway).value();
}

QJsonObject TestGatewaySim::control(const QByteArray &method, const QString &path, const QJsonObject &body)
{
    HttpRequest request;
    request.method = method;
    request.url = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_port) + path);
    if (method != "GET") {
        request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
        request.headers = {{"Content-Type", "application/json"}};
    }
    request.timeoutMs = 10000;
    const HttpResponse response = sendBlocking(request);
    if (response.outcome != HttpResponse::Outcome::Completed)
        qWarning("control %s %s: %s", method.constData(), qPrintable(path), qPrintable(response.errorText));
    return QJsonDocument::fromJson(response.body).object();
}

void TestGatewaySim::setFaults(core::Channel channel, const QJsonObject &faults)
{
    QJsonObject body = faults;
    body.insert(QStringLiteral("channel"), core::channelName(channel));
    const QJsonObject answer = control("POST", QStringLiteral("/sim/faults"), body);
    QVERIFY2(answer.contains(core::channelName(channel)), QJsonDocument(answer).toJson().constData());
}

int TestGatewaySim::stat(const char *group, core::Channel channel)
{
    return control("GET", QStringLiteral("/sim/stats")).value(QLatin1String(group)).toObject().value(core::channelName(channel)).toInt(-1);
}

core::GatewayOrderRequest TestGatewaySim::orderRequest(core::Channel channel)
{
    core::GatewayOrderRequest request;
    request.paymentNo = QStringLiteral("P%1%2_%3").arg(channel == core::Channel::WeChat ? u'W' : u'A').arg(++m_counter).arg(QDateTime::currentMSecsSinceEpoch());
    request.orderNo = QStringLiteral("ORD%1").arg(m_counter);
    request.amountFen = 9900 + m_counter;
    request.description = QStringLiteral("payonce test order");
    request.notifyUrl = QStringLiteral("http://127.0.0.1:1/api/v1/callbacks/") + core::channelName(channel);
    request.traceParent = QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    return request;
}

void TestGatewaySim::createIsIdempotent()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    QCOMPARE(gateway->channel(), channel);
    const auto request = orderRequest(channel);
    auto first = gateway->createOrder(request);
    QVERIFY2(first.ok(), qPrintable(first ? QString() : first.error().internalMessage));
    QVERIFY(!first->codeUrl.isEmpty());
    auto second = gateway->createOrder(request);
    QVERIFY2(second.ok(), qPrintable(second ? QString() : second.error().internalMessage));
    QCOMPARE(second->codeUrl, first->codeUrl);
    QCOMPARE(stat("orders_created", channel), 1);
    // Same out_trade_no with another amount: refused, still one trade.
    auto changed = request;
    changed.amountFen += 1;
    auto third = gateway->createOrder(changed);
    QVERIFY(!third.ok());
    QCOMPARE(third.error().code, core::ErrorCode::Conflict);
    QCOMPARE(stat("orders_created", channel), 1);
}

void TestGatewaySim::queryNotPaidThenPaid()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto request = orderRequest(channel);
    QVERIFY(gateway->createOrder(request).ok());
    auto before = gateway->query(request.paymentNo);
    QVERIFY2(before.ok(), qPrintable(before ? QString() : before.error().internalMessage));
    QCOMPARE(before->state, core::GatewayTradeState::NotPaid);

    const QJsonObject paid = control("POST", QStringLiteral("/sim/pay"),
                                     {{QStringLiteral("channel"), core::channelName(channel)}, {QStringLiteral("out_trade_no"), request.paymentNo}});
    const QString payNo = paid.value(u"pay_no").toString();
    QVERIFY2(!payNo.isEmpty(), QJsonDocument(paid).toJson().constData());

    auto after = gateway->query(request.paymentNo);
    QVERIFY2(after.ok(), qPrintable(after ? QString() : after.error().internalMessage));
    QCOMPARE(after->state, core::GatewayTradeState::Paid);
    QCOMPARE(after->payNo, payNo);
    QCOMPARE(after->amountFen, request.amountFen);

    // Paid: creating again and closing are conflicts, not new trades.
    auto again = gateway->createOrder(request);
    QVERIFY(!again.ok());
    QCOMPARE(again.error().code, core::ErrorCode::Conflict);
    auto close = gateway->close(request.paymentNo);
    QVERIFY(!close.ok());
    QCOMPARE(close.error().code, core::ErrorCode::Conflict);
    QCOMPARE(stat("orders_created", channel), 1);
}

void TestGatewaySim::closeIsIdempotent()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto request = orderRequest(channel);
    QVERIFY(gateway->createOrder(request).ok());
    auto closed = gateway->close(request.paymentNo);
    QVERIFY2(closed.ok(), qPrintable(closed ? QString() : closed.error().internalMessage));
    auto state = gateway->query(request.paymentNo);
    QVERIFY(state.ok());
    QCOMPARE(state->state, core::GatewayTradeState::Closed);
    QVERIFY(gateway->close(request.paymentNo).ok()); // again
    QVERIFY(gateway->close(QStringLiteral("NEVER_CREATED_1")).ok()); // never existed
    auto unknown = gateway->query(QStringLiteral("NEVER_CREATED_1"));
    QVERIFY(unknown.ok());
    QCOMPARE(unknown->state, core::GatewayTradeState::NotFound);
}

void TestGatewaySim::wrongMerchantKeyIsRefused()
{
    QFETCH(core::Channel, channel);
    // A well-formed key that is not the merchant's: the sim must refuse the signature.
    auto impostor = makeGateway(channel, kClientTimeoutMs, fixture("platform_key.pem"));
    const int failuresBefore = stat("signature_failures", channel);
    auto created = impostor->createOrder(orderRequest(channel));
    QVERIFY(!created.ok());
    QCOMPARE(created.error().code, core::ErrorCode::Misconfigured);
    QCOMPARE(stat("signature_failures", channel), failuresBefore + 1);
    QCOMPARE(stat("orders_created", channel), 0);
}

void TestGatewaySim::tamperedResponsesAreBadSignature()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto request = orderRequest(channel);
    QVERIFY(gateway->createOrder(request).ok());
    setFaults(channel, {{QStringLiteral("tamper_responses"), true}});
    auto created = gateway->createOrder(orderRequest(channel));
    QVERIFY(!created.ok());
    QCOMPARE(created.error().code, core::ErrorCode::BadSignature);
    auto queried = gateway->query(request.paymentNo);
    QVERIFY(!queried.ok());
    QCOMPARE(queried.error().code, core::ErrorCode::BadSignature);
    auto closed = gateway->close(request.paymentNo);
    QVERIFY(!closed.ok());
    QCOMPARE(closed.error().code, core::ErrorCode::BadSignature);
}

void TestGatewaySim::errorsAreUnavailable()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    setFaults(channel, {{QStringLiteral("error_rate"), 1.0}});
    auto created = gateway->createOrder(orderRequest(channel));
    QVERIFY(!created.ok());
    QCOMPARE(created.error().code, core::ErrorCode::Unavailable);
    QVERIFY(created.error().isTransient());
    QCOMPARE(stat("orders_created", channel), 0);
    if (channel == core::Channel::Alipay) {
        // Alipay's own way of failing: a signed 200 with code 20000.
        setFaults(channel, {{QStringLiteral("error_rate"), 1.0}, {QStringLiteral("error_status"), 200}});
        auto queried = gateway->query(QStringLiteral("ANY_TRADE_1"));
        QVERIFY(!queried.ok());
        QCOMPARE(queried.error().code, core::ErrorCode::Unavailable);
    }
}

void TestGatewaySim::hangAndLatencyEndAtTheTimeout_data()
{
    QTest::addColumn<core::Channel>("channel");
    QTest::addColumn<QJsonObject>("faults");
    const QJsonObject hang{{QStringLiteral("hang"), true}};
    const QJsonObject slow{{QStringLiteral("latency_ms"), kShortTimeoutMs * 4}};
    QTest::newRow("wechat hang") << core::Channel::WeChat << hang;
    QTest::newRow("wechat latency") << core::Channel::WeChat << slow;
    QTest::newRow("alipay hang") << core::Channel::Alipay << hang;
    QTest::newRow("alipay latency") << core::Channel::Alipay << slow;
}

void TestGatewaySim::hangAndLatencyEndAtTheTimeout()
{
    QFETCH(core::Channel, channel);
    QFETCH(QJsonObject, faults);
    auto gateway = makeGateway(channel, kShortTimeoutMs);
    setFaults(channel, faults);
    QElapsedTimer timer;
    timer.start();
    auto created = gateway->createOrder(orderRequest(channel));
    const qint64 elapsed = timer.elapsed();
    QVERIFY(!created.ok());
    QCOMPARE(created.error().code, core::ErrorCode::Unavailable);
    QVERIFY2(elapsed >= kShortTimeoutMs - 50 && elapsed < kShortTimeoutMs + kSlackMs,
             qPrintable(QStringLiteral("gave up after %1 ms, timeout %2 ms").arg(elapsed).arg(kShortTimeoutMs)));
}

void TestGatewaySim::factoryRefusesBadKeys()
{
    config::WeChatSettings wechat;
    wechat.mchid = kMchid;
    wechat.appid = kAppid;
    wechat.merchantSerial = QStringLiteral("S");
    wechat.merchantPrivateKeyPath = fixture("merchant_pub.pem"); // a public key is no private key
    wechat.platformKeys = {{QStringLiteral("P"), fixture("platform_pub.pem")}};
    auto refused = makeWeChatPayGateway(wechat);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().code, core::ErrorCode::Misconfigured);
    QVERIFY2(refused.error().internalMessage.contains(u"merchant_private_key"), qPrintable(refused.error().internalMessage));

    wechat.merchantPrivateKeyPath = fixture("merchant_key.pem");
    wechat.platformKeys.clear(); // nothing to verify answers with
    auto unverifiable = makeWeChatPayGateway(wechat);
    QVERIFY(!unverifiable.ok());
    QCOMPARE(unverifiable.error().code, core::ErrorCode::Misconfigured);

    config::AlipaySettings alipay;
    alipay.appId = kAlipayAppId;
    alipay.privateKeyPath = fixture("merchant_key.pem");
    alipay.alipayPublicKeyPath = m_dir.filePath(QStringLiteral("missing.pem"));
    auto noKey = makeAlipayGateway(alipay);
    QVERIFY(!noKey.ok());
    QVERIFY2(noKey.error().internalMessage.contains(u"alipay_public_key"), qPrintable(noKey.error().internalMessage));
}

QTEST_GUILESS_MAIN(TestGatewaySim)
#include "tst_gateway_sim.moc"
