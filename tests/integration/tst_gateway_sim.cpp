// The real WeChat Pay and Alipay clients against payonce-sim, started as a child process
// on a free loopback port: signatures both ways, idempotent creation, query and close
// semantics, and the faults (tampered answers, errors, hangs) mapped as the port promises.
// Refunds: the happy path, one refund per refundNo however often it is sent (also after an
// answer lost to a timeout), over-refunds refused, partial refunds up to the total, refund
// query, and the refund_fail fault — each checked against the simulator's own books.

#include "gateway/blockinghttp.h"
#include "gateway/gatewayfactory.h"
#include "simprocess.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce;
using namespace payonce::gateway;
using namespace payonce::platform;

namespace {

constexpr int kClientTimeoutMs = 5000;
constexpr int kShortTimeoutMs = 800;
// Process and connection set-up on a loaded 2-core machine: what separates "gave up at the
// timeout" from "hung".
constexpr int kSlackMs = 2500;

// The merchant the simulator is started for (its defaults).
const QString kMchid = testsupport::SimProcess::Options{}.mchId;
const QString kAppid = testsupport::SimProcess::Options{}.appId;
const QString kAlipayAppId = testsupport::SimProcess::Options{}.alipayAppId;

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

    void refundHappyPath_data() { channels(); }
    void refundHappyPath();
    void sameRefundNoRefundsOnce_data() { channels(); }
    void sameRefundNoRefundsOnce();
    void refundRetriedAfterALostAnswerRefundsOnce_data() { channels(); }
    void refundRetriedAfterALostAnswerRefundsOnce();
    void overRefundIsRefused_data() { channels(); }
    void overRefundIsRefused();
    void partialRefundsSumToTheTotal_data() { channels(); }
    void partialRefundsSumToTheTotal();
    void refundOfUnknownOrUnpaidTrade_data() { channels(); }
    void refundOfUnknownOrUnpaidTrade();
    void refundFailFault_data() { channels(); }
    void refundFailFault();

private:
    static void channels()
    {
        QTest::addColumn<core::Channel>("channel");
        QTest::newRow("wechat") << core::Channel::WeChat;
        QTest::newRow("alipay") << core::Channel::Alipay;
    }
    std::unique_ptr<core::PaymentGateway> makeGateway(core::Channel channel, int timeoutMs = kClientTimeoutMs,
                                                      const QString &merchantKey = fixture("merchant_key.pem"));
    QJsonObject control(const QByteArray &method, const QString &path, const QJsonObject &body = {})
    {
        return m_sim->control(method, path, body);
    }
    void setFaults(core::Channel channel, const QJsonObject &faults);
    int stat(const char *group, core::Channel channel);
    core::GatewayOrderRequest orderRequest(core::Channel channel);
    /// Creates and pays a trade; its payNo through *payNo.
    core::GatewayOrderRequest paidTrade(core::PaymentGateway &gateway, QString *payNo = nullptr);
    core::GatewayRefundRequest refundRequest(const core::GatewayOrderRequest &trade, qint64 amountFen);
    /// The simulator's trade as GET /sim/trades shows it (refunds included).
    QJsonObject simTrade(core::Channel channel, const QString &outTradeNo);

    QTemporaryDir m_dir;
    std::unique_ptr<testsupport::SimProcess> m_sim;
    QByteArray m_platformPem;
    int m_counter = 0;
};

void TestGatewaySim::initTestCase()
{
    QVERIFY(m_dir.isValid());
    testsupport::SimProcess::Options options;
    options.merchantPublicKey = fixture("merchant_pub.pem");
    options.alipaySellerId.clear();
    options.platformSerial.clear();
    QString error;
    m_sim = testsupport::SimProcess::start(options, &error);
    QVERIFY2(m_sim, qPrintable(error));
    m_platformPem = m_sim->platformKeyPem();
    // The control endpoint serves the same key.
    QCOMPARE(control("GET", QStringLiteral("/sim/platform-key")).value(u"public_key_pem").toString().toLatin1(),
             m_platformPem);
}

void TestGatewaySim::init()
{
    QVERIFY(control("POST", QStringLiteral("/sim/reset")).value(u"reset").toBool());
}

void TestGatewaySim::cleanupTestCase()
{
    QVERIFY2(!m_sim || m_sim->stop(), "payonce-sim did not end cleanly on SIGTERM");
}

std::unique_ptr<core::PaymentGateway> TestGatewaySim::makeGateway(core::Channel channel, int timeoutMs,
                                                                  const QString &merchantKey)
{
    GatewayFactoryOptions options;
    options.timeoutMs = timeoutMs;
    options.baseUrlOverride = m_sim->baseUrl();
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

void TestGatewaySim::setFaults(core::Channel channel, const QJsonObject &faults)
{
    QJsonObject body = faults;
    body.insert(QStringLiteral("channel"), core::channelName(channel));
    const QJsonObject answer = control("POST", QStringLiteral("/sim/faults"), body);
    QVERIFY2(answer.contains(core::channelName(channel)), QJsonDocument(answer).toJson().constData());
}

int TestGatewaySim::stat(const char *group, core::Channel channel)
{
    return control("GET", QStringLiteral("/sim/stats"))
        .value(QLatin1String(group))
        .toObject()
        .value(core::channelName(channel))
        .toInt(-1);
}

core::GatewayOrderRequest TestGatewaySim::orderRequest(core::Channel channel)
{
    core::GatewayOrderRequest request;
    request.paymentNo = QStringLiteral("P%1%2_%3")
                            .arg(channel == core::Channel::WeChat ? u'W' : u'A')
                            .arg(++m_counter)
                            .arg(QDateTime::currentMSecsSinceEpoch());
    request.orderNo = QStringLiteral("ORD%1").arg(m_counter);
    request.amountFen = 9900 + m_counter;
    request.description = QStringLiteral("payonce test order");
    request.notifyUrl = QStringLiteral("http://127.0.0.1:1/api/v1/callbacks/") + core::channelName(channel);
    request.traceParent = QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    return request;
}

core::GatewayOrderRequest TestGatewaySim::paidTrade(core::PaymentGateway &gateway, QString *payNo)
{
    const auto request = orderRequest(gateway.channel());
    auto created = gateway.createOrder(request);
    if (!created)
        qWarning("create: %s", qPrintable(created.error().internalMessage));
    const QJsonObject paid = control("POST", QStringLiteral("/sim/pay"),
                                     {{QStringLiteral("channel"), core::channelName(gateway.channel())},
                                      {QStringLiteral("out_trade_no"), request.paymentNo}});
    if (payNo)
        *payNo = paid.value(u"pay_no").toString();
    return request;
}

core::GatewayRefundRequest TestGatewaySim::refundRequest(const core::GatewayOrderRequest &trade, qint64 amountFen)
{
    core::GatewayRefundRequest request;
    request.paymentNo = trade.paymentNo;
    request.refundNo = QStringLiteral("RF%1_%2").arg(++m_counter).arg(QDateTime::currentMSecsSinceEpoch());
    request.amountFen = amountFen;
    request.totalFen = trade.amountFen;
    request.reason = QStringLiteral("payonce test refund");
    request.notifyUrl = QStringLiteral("http://127.0.0.1:1/refund-notify");
    return request;
}

QJsonObject TestGatewaySim::simTrade(core::Channel channel, const QString &outTradeNo)
{
    const QJsonArray trades = control("GET", QStringLiteral("/sim/trades/") + outTradeNo).value(u"trades").toArray();
    for (const QJsonValue &t : trades) {
        if (t.toObject().value(u"channel").toString() == core::channelName(channel))
            return t.toObject();
    }
    return {};
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

    const QJsonObject paid = control(
        "POST", QStringLiteral("/sim/pay"),
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
    QVERIFY(gateway->close(request.paymentNo).ok());                 // again
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
    auto refunded = gateway->refund(refundRequest(request, 1));
    QVERIFY(!refunded.ok());
    QCOMPARE(refunded.error().code, core::ErrorCode::BadSignature);
    auto refundQueried = gateway->queryRefund(request.paymentNo, QStringLiteral("RF_NONE"));
    QVERIFY(!refundQueried.ok());
    QCOMPARE(refundQueried.error().code, core::ErrorCode::BadSignature);
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
    QVERIFY2(refused.error().internalMessage.contains(u"merchant_private_key"),
             qPrintable(refused.error().internalMessage));

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

void TestGatewaySim::refundHappyPath()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    QString payNo;
    const auto trade = paidTrade(*gateway, &payNo);
    QVERIFY(!payNo.isEmpty());
    const auto request = refundRequest(trade, trade.amountFen);
    auto refunded = gateway->refund(request);
    QVERIFY2(refunded.ok(), qPrintable(refunded ? QString() : refunded.error().internalMessage));
    QCOMPARE(refunded->refundNo, request.refundNo);
    QCOMPARE(refunded->paymentNo, trade.paymentNo);
    QCOMPARE(refunded->payNo, payNo);
    QCOMPARE(refunded->amountFen, trade.amountFen);
    // WeChat accepts (PROCESSING) and finishes later; Alipay refunds before it answers.
    QCOMPARE(refunded->state, channel == core::Channel::WeChat ? core::GatewayRefundState::Processing
                                                               : core::GatewayRefundState::Success);
    QCOMPARE(refunded->refundId.isEmpty(), channel == core::Channel::Alipay);

    auto queried = gateway->queryRefund(trade.paymentNo, request.refundNo);
    QVERIFY2(queried.ok(), qPrintable(queried ? QString() : queried.error().internalMessage));
    QCOMPARE(queried->state, core::GatewayRefundState::Success);
    QCOMPARE(queried->amountFen, trade.amountFen);
    QCOMPARE(queried->payNo, payNo);
    QCOMPARE(queried->refundId, refunded->refundId);

    // The platform's books: one refund, the whole amount back.
    const QJsonObject simulated = simTrade(channel, trade.paymentNo);
    QCOMPARE(simulated.value(u"refunded_fen").toInteger(), trade.amountFen);
    const QJsonArray refunds = simulated.value(u"refunds").toArray();
    QCOMPARE(refunds.size(), 1);
    QCOMPARE(refunds.first().toObject().value(u"out_refund_no").toString(), request.refundNo);
    QCOMPARE(refunds.first().toObject().value(u"state").toString(), QStringLiteral("SUCCESS"));
    QCOMPARE(stat("refund_calls", channel), 1);
    QCOMPARE(stat("refunds_created", channel), 1);
    QCOMPARE(stat("refunded_fen", channel), trade.amountFen);

    // A fully refunded trade: WeChat REFUND, Alipay TRADE_CLOSED.
    auto state = gateway->query(trade.paymentNo);
    QVERIFY(state.ok());
    QCOMPARE(state->state,
             channel == core::Channel::WeChat ? core::GatewayTradeState::Refunded : core::GatewayTradeState::Closed);
}

void TestGatewaySim::sameRefundNoRefundsOnce()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    QString payNo;
    const auto trade = paidTrade(*gateway, &payNo);
    auto request = refundRequest(trade, 300);
    request.payNo = payNo; // by the platform's transaction id this time
    auto first = gateway->refund(request);
    QVERIFY2(first.ok(), qPrintable(first ? QString() : first.error().internalMessage));
    auto second = gateway->refund(request);
    QVERIFY2(second.ok(), qPrintable(second ? QString() : second.error().internalMessage));
    QCOMPARE(second->refundNo, request.refundNo);
    QCOMPARE(second->refundId, first->refundId);
    QCOMPARE(second->amountFen, 300);
    QCOMPARE(second->state, core::GatewayRefundState::Success); // the first one, finished meanwhile

    QCOMPARE(stat("refund_calls", channel), 2);
    QCOMPARE(stat("refunds_created", channel), 1);
    QCOMPARE(stat("refunded_fen", channel), 300);
    const QJsonObject simulated = simTrade(channel, trade.paymentNo);
    QCOMPARE(simulated.value(u"refunds").toArray().size(), 1);
    QCOMPARE(simulated.value(u"refunded_fen").toInteger(), 300);

    // The same refundNo with another amount is not a second refund either: refused.
    auto changed = request;
    changed.amountFen = 400;
    auto third = gateway->refund(changed);
    QVERIFY(!third.ok());
    QCOMPARE(third.error().code, core::ErrorCode::Conflict);
    QCOMPARE(stat("refunds_created", channel), 1);
    QCOMPARE(stat("refunded_fen", channel), 300);
}

void TestGatewaySim::refundRetriedAfterALostAnswerRefundsOnce()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto trade = paidTrade(*gateway);
    const auto request = refundRequest(trade, 500);
    // The platform refunds, but its answer never arrives: the outcome is unknown.
    setFaults(channel, {{QStringLiteral("hang"), true}});
    auto lost = makeGateway(channel, kShortTimeoutMs)->refund(request);
    QVERIFY(!lost.ok());
    QCOMPARE(lost.error().code, core::ErrorCode::Unavailable);
    QVERIFY(lost.error().isTransient());
    setFaults(channel, {});
    QCOMPARE(stat("refunds_created", channel), 1);
    // The retry, with the same refundNo, answers that refund and refunds nothing more.
    auto retried = gateway->refund(request);
    QVERIFY2(retried.ok(), qPrintable(retried ? QString() : retried.error().internalMessage));
    QCOMPARE(retried->state, core::GatewayRefundState::Success);
    QCOMPARE(retried->amountFen, 500);
    QCOMPARE(stat("refunds_created", channel), 1);
    QCOMPARE(stat("refunded_fen", channel), 500);
    QCOMPARE(simTrade(channel, trade.paymentNo).value(u"refunded_fen").toInteger(), 500);
}

void TestGatewaySim::overRefundIsRefused()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto trade = paidTrade(*gateway);
    // More than was paid, in one refund. (The client refuses amount > total itself, so the
    // platform's check is reached with a total that lies.)
    auto tooMuch = refundRequest(trade, trade.amountFen + 1);
    tooMuch.totalFen = trade.amountFen + 1;
    auto refused = gateway->refund(tooMuch);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().code, core::ErrorCode::Conflict);
    QVERIFY(!refused.error().isTransient());
    QCOMPARE(stat("refunds_created", channel), 0);

    // More than is left, in a second refund.
    const qint64 first = trade.amountFen - 100;
    QVERIFY(gateway->refund(refundRequest(trade, first)).ok());
    auto second = gateway->refund(refundRequest(trade, 101));
    QVERIFY(!second.ok());
    QCOMPARE(second.error().code, core::ErrorCode::Conflict);
    QCOMPARE(stat("refunds_created", channel), 1);
    QCOMPARE(stat("refunded_fen", channel), first);
    const QJsonObject simulated = simTrade(channel, trade.paymentNo);
    QCOMPARE(simulated.value(u"refunded_fen").toInteger(), first);
    QCOMPARE(simulated.value(u"refunds").toArray().size(), 1);
}

void TestGatewaySim::partialRefundsSumToTheTotal()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto trade = paidTrade(*gateway);
    const qint64 parts[] = {1, trade.amountFen / 2, trade.amountFen - 1 - trade.amountFen / 2};
    QStringList refundNos;
    for (const qint64 part : parts) {
        const auto request = refundRequest(trade, part);
        auto refunded = gateway->refund(request);
        QVERIFY2(refunded.ok(), qPrintable(refunded ? QString() : refunded.error().internalMessage));
        QCOMPARE(refunded->amountFen, part);
        refundNos.append(request.refundNo);
    }
    // Still paid until the last fen; now nothing is left.
    auto oneMore = gateway->refund(refundRequest(trade, 1));
    QVERIFY(!oneMore.ok());
    QCOMPARE(oneMore.error().code, core::ErrorCode::Conflict);

    const QJsonObject simulated = simTrade(channel, trade.paymentNo);
    QCOMPARE(simulated.value(u"refunded_fen").toInteger(), trade.amountFen);
    const QJsonArray refunds = simulated.value(u"refunds").toArray();
    QCOMPARE(refunds.size(), 3);
    qint64 sum = 0;
    for (int i = 0; i < 3; ++i) {
        const QJsonObject r = refunds.at(i).toObject();
        QCOMPARE(r.value(u"out_refund_no").toString(), refundNos.at(i));
        QCOMPARE(r.value(u"amount_fen").toInteger(), parts[i]);
        sum += r.value(u"amount_fen").toInteger();
        // Each one queried on its own.
        auto queried = gateway->queryRefund(trade.paymentNo, refundNos.at(i));
        QVERIFY(queried.ok());
        QCOMPARE(queried->state, core::GatewayRefundState::Success);
        QCOMPARE(queried->amountFen, parts[i]);
    }
    QCOMPARE(sum, trade.amountFen);
    QCOMPARE(stat("refunded_fen", channel), trade.amountFen);
}

void TestGatewaySim::refundOfUnknownOrUnpaidTrade()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    // A refund the platform never saw: NotFound, a definite answer (safe to submit).
    auto unknownRefund = gateway->queryRefund(QStringLiteral("NEVER_PAID_1"), QStringLiteral("RF_NEVER_1"));
    QVERIFY2(unknownRefund.ok(), qPrintable(unknownRefund ? QString() : unknownRefund.error().internalMessage));
    QCOMPARE(unknownRefund->state, core::GatewayRefundState::NotFound);

    core::GatewayOrderRequest never = orderRequest(channel);
    auto noTrade = gateway->refund(refundRequest(never, 100));
    QVERIFY(!noTrade.ok());
    QCOMPARE(noTrade.error().code, core::ErrorCode::NotFound);

    const auto unpaid = orderRequest(channel);
    QVERIFY(gateway->createOrder(unpaid).ok());
    auto notPaid = gateway->refund(refundRequest(unpaid, 100));
    QVERIFY(!notPaid.ok());
    QCOMPARE(notPaid.error().code, core::ErrorCode::Conflict);

    // Malformed requests never leave the client.
    auto zero = gateway->refund(refundRequest(unpaid, 0));
    QVERIFY(!zero.ok());
    QCOMPARE(zero.error().code, core::ErrorCode::InvalidInput);
    auto badNo = refundRequest(unpaid, 1);
    badNo.refundNo = QStringLiteral("RF/../1");
    QCOMPARE(gateway->refund(badNo).error().code, core::ErrorCode::InvalidInput);
    QCOMPARE(stat("refund_calls", channel), 2);
    QCOMPARE(stat("refunds_created", channel), 0);
}

void TestGatewaySim::refundFailFault()
{
    QFETCH(core::Channel, channel);
    auto gateway = makeGateway(channel);
    const auto trade = paidTrade(*gateway);
    setFaults(channel, {{QStringLiteral("refund_fail"), true}});
    QVERIFY(control("GET", QStringLiteral("/sim/faults"))
                .value(core::channelName(channel))
                .toObject()
                .value(u"refund_fail")
                .toBool());
    const auto request = refundRequest(trade, trade.amountFen);
    auto failed = gateway->refund(request);
    if (channel == core::Channel::WeChat) {
        // Accepted, then CLOSED: the answer says PROCESSING, the query tells the end.
        QVERIFY2(failed.ok(), qPrintable(failed ? QString() : failed.error().internalMessage));
        QCOMPARE(failed->state, core::GatewayRefundState::Processing);
        auto queried = gateway->queryRefund(trade.paymentNo, request.refundNo);
        QVERIFY(queried.ok());
        QCOMPARE(queried->state, core::GatewayRefundState::Closed);
        const QJsonArray refunds = simTrade(channel, trade.paymentNo).value(u"refunds").toArray();
        QCOMPARE(refunds.size(), 1);
        QCOMPARE(refunds.first().toObject().value(u"state").toString(), QStringLiteral("CLOSED"));
    } else {
        // Alipay refuses synchronously; no refund exists under that out_request_no.
        QVERIFY(!failed.ok());
        QCOMPARE(failed.error().code, core::ErrorCode::Conflict);
        auto queried = gateway->queryRefund(trade.paymentNo, request.refundNo);
        QVERIFY(queried.ok());
        QCOMPARE(queried->state, core::GatewayRefundState::NotFound);
        QCOMPARE(stat("refunds_created", channel), 0);
    }
    QCOMPARE(stat("refunded_fen", channel), 0);
    QCOMPARE(simTrade(channel, trade.paymentNo).value(u"refunded_fen").toInteger(), 0);

    // Nothing went back, so the whole amount can still be refunded once the fault is gone.
    setFaults(channel, {});
    auto again = gateway->refund(refundRequest(trade, trade.amountFen));
    QVERIFY2(again.ok(), qPrintable(again ? QString() : again.error().internalMessage));
    QCOMPARE(stat("refunded_fen", channel), trade.amountFen);
}

QTEST_GUILESS_MAIN(TestGatewaySim)
#include "tst_gateway_sim.moc"
