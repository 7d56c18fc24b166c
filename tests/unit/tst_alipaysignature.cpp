// Alipay RSA2 signatures against the openssl CLI, run at test time over the exact bytes
// our code says are signed: request parameters (sorted k=v, no sign, no empty values),
// notifications (no sign, no sign_type, empty values kept), and responses (the raw text of
// the response object). And the keys as Alipay hands them out (bare base64).

#include "gateway/gatewayfactory.h"
#include "platform/alipay.h"

#include <QFile>
#include <QProcess>
#include <QTest>

using namespace payonce;
using namespace payonce::platform;

namespace {

QString fixture(const char *name)
{
    return QStringLiteral(PAYONCE_FIXTURES_DIR "/crypto/") + QString::fromLatin1(name);
}

// base64 SHA256withRSA of message by `openssl dgst`, or empty on failure.
QByteArray opensslSign(const QByteArray &message, const char *keyFixture)
{
    QProcess openssl;
    openssl.start(QStringLiteral("openssl"),
                  {QStringLiteral("dgst"), QStringLiteral("-sha256"), QStringLiteral("-sign"), fixture(keyFixture)});
    if (!openssl.waitForStarted(10000))
        return {};
    openssl.write(message);
    openssl.closeWriteChannel();
    if (!openssl.waitForFinished(20000) || openssl.exitCode() != 0)
        return {};
    return openssl.readAllStandardOutput().toBase64();
}

const alipay::Params kParams{
    {"app_id", "2021000000000000"},
    {"method", "alipay.trade.precreate"},
    {"format", "JSON"},
    {"charset", "utf-8"},
    {"sign_type", "RSA2"},
    {"timestamp", "2024-01-01 12:00:00"},
    {"version", "1.0"},
    {"notify_url", "http://127.0.0.1:8080/api/v1/callbacks/alipay"},
    {"empty", ""},
    {"biz_content", "{\"out_trade_no\":\"PAY0001\",\"total_amount\":\"99.00\",\"subject\":\"x & y\"}"},
};

} // namespace

class TestAlipaySignature : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void signContentSortsAndFilters();
    void requestSignatureMatchesOpensslCli();
    void rawMemberKeepsExactText_data();
    void rawMemberKeepsExactText();
    void verifiesCliSignedResponse();
    void notificationContentKeepsEmptyValues();
    void keysAsBareBase64_data();
    void keysAsBareBase64();
};

void TestAlipaySignature::signContentSortsAndFilters()
{
    const QByteArray expected = "app_id=2021000000000000&biz_content={\"out_trade_no\":\"PAY0001\",\"total_amount\":"
                                "\"99.00\",\"subject\":\"x & y\"}"
                                "&charset=utf-8&format=JSON&method=alipay.trade.precreate"
                                "&notify_url=http:"
                                "//127.0.0.1:8080/api/v1/callbacks/alipay"
                                "&sign_type=RSA2&timestamp=2024-01-01 12:00:00&version=1.0";
    QCOMPARE(alipay::signContent(kParams), expected);
    alipay::Params withSign = kParams;
    withSign.append(qMakePair(QByteArray("sign"), QByteArray("abc")));
    QCOMPARE(alipay::signContent(withSign), expected);
    QVERIFY(!alipay::signContent(withSign, alipay::SignContentKind::Notification).contains("sign_type"));
}

void TestAlipaySignature::requestSignatureMatchesOpensslCli()
{
    auto key = crypto::PrivateKey::fromFile(fixture("merchant_key.pem"));
    QVERIFY(key.ok());
    const QByteArray cli = opensslSign(alipay::signContent(kParams), "merchant_key.pem");
    QVERIFY2(!cli.isEmpty(), "openssl dgst failed");
    QCOMPARE(*alipay::signParams(*key, kParams), cli);
    auto pub = crypto::PublicKey::fromFile(fixture("merchant_pub.pem"));
    alipay::Params signedParams = kParams;
    signedParams.append(qMakePair(QByteArray("sign"), cli));
    QVERIFY(alipay::verifyParams(*pub, signedParams));
    signedParams[0].second = "2021000000000001";
    QVERIFY(!alipay::verifyParams(*pub, signedParams));
}

void TestAlipaySignature::rawMemberKeepsExactText_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("first") << QByteArray("{\"a_response\":{\"x\":1, \"y\":\"}\"},\"sign\":\"s\"}")
                           << QByteArray("a_response") << QByteArray("{\"x\":1, \"y\":\"}\"}");
    QTest::newRow("after sign") << QByteArray("{ \"sign\" : \"s\" , \"a_response\" : {\"q\":\"\\\"{\"} }")
                                << QByteArray("a_response") << QByteArray("{\"q\":\"\\\"{\"}");
    QTest::newRow("nested") << QByteArray("{\"b\":[1,{\"a_response\":2}],\"a_response\":{\"k\":[{}]}}")
                            << QByteArray("a_response") << QByteArray("{\"k\":[{}]}");
    QTest::newRow("absent") << QByteArray("{\"b\":1}") << QByteArray("a_response") << QByteArray();
    QTest::newRow("malformed") << QByteArray("{\"a_response\":{\"x\":1") << QByteArray("a_response") << QByteArray();
}

void TestAlipaySignature::rawMemberKeepsExactText()
{
    QFETCH(QByteArray, json);
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, expected);
    const auto raw = alipay::rawMember(json, key);
    if (expected.isEmpty())
        QVERIFY(!raw.has_value());
    else
        QCOMPARE(raw.value_or(QByteArray()), expected);
}

void TestAlipaySignature::verifiesCliSignedResponse()
{
    const QByteArray inner =
        "{\"code\":\"10000\",\"msg\":\"Success\",\"out_trade_no\":\"PAY0001\",\"trade_status\":\"WAIT_BUYER_PAY\"}";
    const QByteArray sign = opensslSign(inner, "platform_key.pem");
    QVERIFY(!sign.isEmpty());
    auto pub = crypto::PublicKey::fromFile(fixture("platform_pub.pem"));
    const QByteArray body = alipay::frameResponse("alipay.trade.query", inner, sign);
    auto verified = alipay::verifiedResponse(*pub, body, "alipay.trade.query");
    QVERIFY(verified.ok());
    QCOMPARE(*verified, inner);
    QByteArray tampered = body;
    tampered.replace("WAIT_BUYER_PAY", "TRADE_SUCCESS");
    auto refused = alipay::verifiedResponse(*pub, tampered, "alipay.trade.query");
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().code, core::ErrorCode::BadSignature);
    QVERIFY(!alipay::verifiedResponse(*pub, body, "alipay.trade.close").ok()); // another method's frame
    QByteArray unsignedBody = "{\"alipay_trade_query_response\":" + inner + "}";
    QVERIFY(!alipay::verifiedResponse(*pub, unsignedBody, "alipay.trade.query").ok());
}

void TestAlipaySignature::notificationContentKeepsEmptyValues()
{
    // Alipay's own verifiers (the Java SDK's getSignCheckContentV1, the Node SDK's notify
    // check) keep every parameter but sign and sign_type, empty values included; request
    // signing leaves empty values out.
    const alipay::Params params{
        {"trade_no", "2026"}, {"body", ""}, {"sign_type", "RSA2"}, {"sign", "abc"}, {"app_id", "2021"}};
    QCOMPARE(alipay::signContent(params, alipay::SignContentKind::Notification),
             QByteArray("app_id=2021&body=&trade_no=2026"));
    QCOMPARE(alipay::signContent(params, alipay::SignContentKind::Request),
             QByteArray("app_id=2021&sign_type=RSA2&trade_no=2026"));
}

void TestAlipaySignature::keysAsBareBase64_data()
{
    QTest::addColumn<QString>("privateKey");
    QTest::addColumn<QString>("publicKey");
    QTest::newRow("pkcs8 and spki, bare") << fixture("merchant_key_pkcs8_bare.txt") << fixture("merchant_pub_bare.txt");
    QTest::newRow("pkcs1, bare") << fixture("merchant_key_pkcs1_bare.txt") << fixture("merchant_pub_bare.txt");
    QTest::newRow("pem") << fixture("merchant_key.pem") << fixture("merchant_pub.pem");
}

void TestAlipaySignature::keysAsBareBase64()
{
    // Alipay's console and key tool hand out the app private key and the Alipay public key
    // as bare base64 (no PEM armour): the gateway takes both forms.
    QFETCH(QString, privateKey);
    QFETCH(QString, publicKey);
    config::AlipaySettings settings;
    settings.appId = QStringLiteral("2021000000000000");
    settings.sellerId = QStringLiteral("2088000000000000");
    settings.privateKeyPath = privateKey;
    settings.alipayPublicKeyPath = publicKey;
    auto gateway = gateway::makeAlipayGateway(settings, {});
    QVERIFY2(gateway.ok(), gateway.ok() ? "" : qPrintable(gateway.error().internalMessage));

    // WeChat Pay's merchant key stays a PEM file.
    config::WeChatSettings wechat;
    wechat.mchid = QStringLiteral("1900000001");
    wechat.appid = QStringLiteral("wx0000000000000000");
    wechat.merchantSerial = QStringLiteral("SERIAL");
    wechat.merchantPrivateKeyPath = fixture("merchant_key_pkcs8_bare.txt");
    wechat.platformKeys.append({QStringLiteral("PLATFORM"), fixture("platform_pub.pem")});
    auto refused = gateway::makeWeChatPayGateway(wechat, {});
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().code, core::ErrorCode::Misconfigured);
}

QTEST_GUILESS_MAIN(TestAlipaySignature)
#include "tst_alipaysignature.moc"
