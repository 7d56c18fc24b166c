// WeChat Pay v3 signatures against the openssl CLI (tests/fixtures/crypto/make-fixtures.sh):
// our Authorization header must carry exactly the signature the CLI makes over the same
// five-line message with the same key, and our verifier must accept the CLI-signed
// response and refuse any change to it.

#include "platform/wechatpay.h"

#include <QFile>
#include <QTest>

using namespace payonce;
using namespace payonce::platform;

namespace {

QByteArray readFixture(const char *name)
{
    QFile file(QStringLiteral(PAYONCE_FIXTURES_DIR "/crypto/") + QString::fromLatin1(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read fixture %s", name);
    return file.readAll();
}

constexpr qint64 kRequestTimestamp = 1554208460;
const QByteArray kRequestNonce = "593BEC0C930BF1AFEB40B4A08C8FB242";

wechat::SignedHeaders fixtureHeaders()
{
    return {readFixture("wechat_response_timestamp.txt"), readFixture("wechat_response_nonce.txt"),
            readFixture("wechat_response.sig.b64").trimmed(), "PUB_KEY_ID_0001"};
}

qint64 fixtureNow()
{
    return readFixture("wechat_response_timestamp.txt").toLongLong() + 10;
}

wechat::PlatformVerifier fixtureVerifier()
{
    wechat::PlatformVerifier verifier;
    auto other = crypto::PublicKey::fromPem(readFixture("merchant_pub.pem"));
    auto platform = crypto::PublicKey::fromPem(readFixture("platform_pub.pem"));
    if (!other || !platform)
        qFatal("fixture keys do not load");
    verifier.addKey(QStringLiteral("OTHER_SERIAL"), *other); // several keys: the serial picks
    verifier.addKey(QStringLiteral("PUB_KEY_ID_0001"), *platform);
    return verifier;
}

} // namespace

class TestWeChatSignature : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void requestMessageLayout();
    void authorizationMatchesOpensslCli();
    void parsesAuthorization();
    void refusesForeignAuthorization_data();
    void refusesForeignAuthorization();
    void verifiesCliSignedResponse();
    void refusesTamperedResponse_data();
    void refusesTamperedResponse();
};

void TestWeChatSignature::requestMessageLayout()
{
    QCOMPARE(wechat::requestMessage("GET", "/v3/certificates", kRequestTimestamp, kRequestNonce, ""),
             QByteArray("GET\n/v3/certificates\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n\n"));
    QCOMPARE(wechat::responseMessage("1700000000", "abc", "{}"), QByteArray("1700000000\nabc\n{}\n"));
}

void TestWeChatSignature::authorizationMatchesOpensslCli()
{
    auto key = crypto::PrivateKey::fromPem(readFixture("merchant_key.pem"));
    QVERIFY(key.ok());
    const QByteArray body = readFixture("wechat_request_body.json");
    auto header = wechat::signRequest(*key, "1900000001", "MERCHANT_SERIAL_01", "POST", "/v3/pay/transactions/native",
                                      kRequestTimestamp, kRequestNonce, body);
    QVERIFY(header.ok());
    const QByteArray cliSignature = readFixture("wechat_request.sig.b64").trimmed();
    const QByteArray expected =
        "WECHATPAY2-SHA256-RSA2048 mchid=\"1900000001\",nonce_str=\"593BEC0C930BF1AFEB40B4A08C8FB242\","
        "signature=\""
        + cliSignature + "\",timestamp=\"1554208460\",serial_no=\"MERCHANT_SERIAL_01\"";
    QCOMPARE(*header, expected);
    // And the CLI's public half accepts it over the documented message.
    auto pub = crypto::PublicKey::fromPem(readFixture("merchant_pub.pem"));
    QVERIFY(pub->verifyBase64(
        wechat::requestMessage("POST", "/v3/pay/transactions/native", kRequestTimestamp, kRequestNonce, body),
        cliSignature));
}

void TestWeChatSignature::parsesAuthorization()
{
    auto parsed = wechat::parseAuthorization("WECHATPAY2-SHA256-RSA2048 serial_no=\"S1\",timestamp=\"12\", "
                                             "signature=\"ab+/==\",nonce_str=\"N\",mchid=\"19\"");
    QVERIFY(parsed.ok());
    QCOMPARE(parsed->mchid, QByteArray("19"));
    QCOMPARE(parsed->nonce, QByteArray("N"));
    QCOMPARE(parsed->signature, QByteArray("ab+/=="));
    QCOMPARE(parsed->timestamp, QByteArray("12"));
    QCOMPARE(parsed->serialNo, QByteArray("S1"));
}

void TestWeChatSignature::refusesForeignAuthorization_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("bearer") << QByteArray("Bearer abc");
    QTest::newRow("missing signature") << QByteArray(
        "WECHATPAY2-SHA256-RSA2048 mchid=\"1\",nonce_str=\"N\",timestamp=\"1\",serial_no=\"S\"");
    QTest::newRow("unterminated") << QByteArray("WECHATPAY2-SHA256-RSA2048 mchid=\"1");
}

void TestWeChatSignature::refusesForeignAuthorization()
{
    QFETCH(QByteArray, header);
    QVERIFY(!wechat::parseAuthorization(header).ok());
}

void TestWeChatSignature::verifiesCliSignedResponse()
{
    const auto verifier = fixtureVerifier();
    auto result = verifier.verify(fixtureHeaders(), readFixture("wechat_response_body.json"), fixtureNow());
    QVERIFY2(result.ok(), qPrintable(result ? QString() : result.error().internalMessage));
}

void TestWeChatSignature::refusesTamperedResponse_data()
{
    QTest::addColumn<QByteArray>("timestamp");
    QTest::addColumn<QByteArray>("nonce");
    QTest::addColumn<QByteArray>("signature");
    QTest::addColumn<QByteArray>("serial");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<qint64>("now");
    QTest::addColumn<QString>("reason");
    const auto h = fixtureHeaders();
    const QByteArray body = readFixture("wechat_response_body.json");
    QByteArray alteredBody = body;
    alteredBody.replace("fixture01", "fixture02");
    const qint64 now = fixtureNow();
    const QByteArray laterTimestamp = QByteArray::number(h.timestamp.toLongLong() + 1);
    QTest::newRow("body changed") << h.timestamp << h.nonce << h.signature << h.serial << alteredBody << now
                                  << QStringLiteral("does not verify");
    QTest::newRow("body with trailing newline") << h.timestamp << h.nonce << h.signature << h.serial << body + "\n"
                                                << now << QStringLiteral("does not verify");
    QTest::newRow("nonce changed") << h.timestamp << QByteArray("x") + h.nonce << h.signature << h.serial << body << now
                                   << QStringLiteral("does not verify");
    QTest::newRow("timestamp changed") << laterTimestamp << h.nonce << h.signature << h.serial << body << now
                                       << QStringLiteral("does not verify");
    QTest::newRow("other key's serial") << h.timestamp << h.nonce << h.signature << QByteArray("OTHER_SERIAL") << body
                                        << now << QStringLiteral("does not verify");
    QTest::newRow("unknown serial") << h.timestamp << h.nonce << h.signature << QByteArray("NOPE") << body << now
                                    << QStringLiteral("unknown platform key serial");
    QTest::newRow("too old") << h.timestamp << h.nonce << h.signature << h.serial << body << now + 400
                             << QStringLiteral("more than 300 s");
    QTest::newRow("from the future") << h.timestamp << h.nonce << h.signature << h.serial << body << now - 400
                                     << QStringLiteral("more than 300 s");
    QTest::newRow("no signature") << h.timestamp << h.nonce << QByteArray() << h.serial << body << now
                                  << QStringLiteral("no complete");
    QTest::newRow("garbage signature") << h.timestamp << h.nonce << QByteArray("AAAA") << h.serial << body << now
                                       << QStringLiteral("does not verify");
}

void TestWeChatSignature::refusesTamperedResponse()
{
    QFETCH(QByteArray, timestamp);
    QFETCH(QByteArray, nonce);
    QFETCH(QByteArray, signature);
    QFETCH(QByteArray, serial);
    QFETCH(QByteArray, body);
    QFETCH(qint64, now);
    QFETCH(QString, reason);
    auto result = fixtureVerifier().verify({timestamp, nonce, signature, serial}, body, now);
    QVERIFY(!result.ok());
    QCOMPARE(result.error().code, core::ErrorCode::BadSignature);
    QVERIFY2(result.error().internalMessage.contains(reason), qPrintable(result.error().internalMessage));
}

QTEST_GUILESS_MAIN(TestWeChatSignature)
#include "tst_wechatsignature.moc"
