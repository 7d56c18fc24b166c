// payonce_crypto against fixtures made by independent tools (the openssl CLI and
// python3-cryptography, tests/fixtures/crypto/make-fixtures.sh, committed): our verifier
// must accept their signatures and our decryptor their ciphertext, and both must refuse
// any change.

#include "crypto/aesgcm.h"
#include "crypto/rsakeys.h"
#include "crypto/securerandom.h"
#include "crypto/sha256.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce;
using namespace payonce::crypto;

namespace {

QString fixture(const char *name)
{
    return QStringLiteral(PAYONCE_FIXTURES_DIR "/crypto/") + QString::fromLatin1(name);
}

QByteArray readFixture(const char *name)
{
    QFile file(fixture(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read fixture %s", name);
    return file.readAll();
}

QJsonObject aesFixture()
{
    return QJsonDocument::fromJson(readFixture("aesgcm.json")).object();
}

QByteArray field(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toString().toUtf8();
}

} // namespace

class TestCrypto : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void signVerifyRoundTrip();
    void verifiesOpensslCliSignature();
    void refusesAlteredMessageOrSignature();
    void bareBase64KeysOnlyWhenAccepted();
    void loadsPublicKeyForms_data();
    void loadsPublicKeyForms();
    void badPemIsAClearError_data();
    void badPemIsAClearError();
    void missingFileIsAClearError();
    void generatedKeyRoundTripsThroughPem();
    void decryptsPythonCiphertext();
    void gcmRefusesTampering_data();
    void gcmRefusesTampering();
    void gcmRejectsBadKeyLength();
    void gcmEncryptDecryptRoundTrip();
    void randomAndNonces();
    void constantTimeCompare();
    void sha256KnownAnswersAndParts();
};

void TestCrypto::signVerifyRoundTrip()
{
    auto key = PrivateKey::fromFile(fixture("merchant_key.pem"));
    QVERIFY2(key.ok(), qPrintable(key ? QString() : key.error().internalMessage));
    QCOMPARE(key->bits(), 2048);
    const QByteArray message = "GET\n/v3/pay/transactions/out-trade-no/PAY1?mchid=1900000001\n1\nN\n\n";
    auto sig = key->signBase64(message);
    QVERIFY(sig.ok());
    QVERIFY(key->publicKey().verifyBase64(message, *sig));
    auto pub = PublicKey::fromFile(fixture("merchant_pub.pem"));
    QVERIFY(pub.ok());
    QVERIFY(pub->verifyBase64(message, *sig));
    // PKCS#1 v1.5 is deterministic: the same key and message give the same signature.
    QCOMPARE(*key->signBase64(message), *sig);
}

void TestCrypto::verifiesOpensslCliSignature()
{
    auto pub = PublicKey::fromFile(fixture("merchant_pub.pem"));
    QVERIFY(pub.ok());
    const QByteArray message = readFixture("message.txt");
    const QByteArray cliSignature = readFixture("message.sig.b64").trimmed();
    QVERIFY(pub->verifyBase64(message, cliSignature));
    // And our signer produces the very bytes the CLI produced (deterministic padding).
    auto key = PrivateKey::fromFile(fixture("merchant_key.pem"));
    QVERIFY(key.ok());
    QCOMPARE(*key->signBase64(message), cliSignature);
}

void TestCrypto::bareBase64KeysOnlyWhenAccepted()
{
    // Alipay's form of the same keys (bare base64 of the DER, made by the openssl CLI):
    // the same signature as the CLI's, the same verification.
    const QByteArray message = readFixture("message.txt");
    const QByteArray cliSignature = readFixture("message.sig.b64").trimmed();
    for (const char *name : {"merchant_key_pkcs8_bare.txt", "merchant_key_pkcs1_bare.txt"}) {
        auto key = PrivateKey::fromFile(fixture(name), KeyEncoding::PemOrBareBase64);
        QVERIFY2(key.ok(), key.ok() ? name : qPrintable(key.error().internalMessage));
        QCOMPARE(*key->signBase64(message), cliSignature);
        QCOMPARE(PrivateKey::fromFile(fixture(name)).error().code, core::ErrorCode::Misconfigured); // PEM only
    }
    auto pub = PublicKey::fromFile(fixture("merchant_pub_bare.txt"), KeyEncoding::PemOrBareBase64);
    QVERIFY2(pub.ok(), pub.ok() ? "" : qPrintable(pub.error().internalMessage));
    QVERIFY(pub->verifyBase64(message, cliSignature));
    QCOMPARE(PublicKey::fromFile(fixture("merchant_pub_bare.txt")).error().code, core::ErrorCode::Misconfigured);
    // PEM stays accepted, and text that is neither is a clear error naming its source.
    QVERIFY(PublicKey::fromFile(fixture("merchant_pub.pem"), KeyEncoding::PemOrBareBase64).ok());
    auto garbage = PrivateKey::fromText("not a key!", KeyEncoding::PemOrBareBase64, QStringLiteral("app.key"));
    QVERIFY(!garbage.ok());
    QCOMPARE(garbage.error().code, core::ErrorCode::Misconfigured);
    QVERIFY2(garbage.error().internalMessage.startsWith(QLatin1String("app.key: neither a PEM private key")),
             qPrintable(garbage.error().internalMessage));
    // Base64 of something that is not a key (the public key where a private one belongs).
    auto wrong = PrivateKey::fromFile(fixture("merchant_pub_bare.txt"), KeyEncoding::PemOrBareBase64);
    QVERIFY(!wrong.ok());
    QCOMPARE(wrong.error().code, core::ErrorCode::Misconfigured);
}

void TestCrypto::refusesAlteredMessageOrSignature()
{
    auto pub = PublicKey::fromFile(fixture("merchant_pub.pem"));
    auto other = PublicKey::fromFile(fixture("platform_pub.pem"));
    QVERIFY(pub.ok() && other.ok());
    QByteArray message = readFixture("message.txt");
    const QByteArray signature = readFixture("message.sig.b64").trimmed();
    QVERIFY(!other->verifyBase64(message, signature)); // wrong key
    QByteArray altered = message;
    altered[0] = 'P';
    QVERIFY(!pub->verifyBase64(altered, signature));
    QByteArray raw = QByteArray::fromBase64(signature);
    raw[10] = static_cast<char>(raw[10] ^ 0x01);
    QVERIFY(!pub->verify(message, raw));
    QVERIFY(!pub->verifyBase64(message, QByteArray("not base64 !!")));
    QVERIFY(!pub->verifyBase64(message, QByteArray()));
    QVERIFY(!PublicKey().verifyBase64(message, signature)); // a null key verifies nothing
}

void TestCrypto::loadsPublicKeyForms_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("spki") << fixture("merchant_pub.pem");
    QTest::newRow("pkcs1") << fixture("merchant_pub_pkcs1.pem");
}

void TestCrypto::loadsPublicKeyForms()
{
    QFETCH(QString, file);
    auto pub = PublicKey::fromFile(file);
    QVERIFY2(pub.ok(), qPrintable(pub ? QString() : pub.error().internalMessage));
    QVERIFY(pub->verifyBase64(readFixture("message.txt"), readFixture("message.sig.b64").trimmed()));
}

void TestCrypto::badPemIsAClearError_data()
{
    QTest::addColumn<QByteArray>("pem");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("not a PEM private key");
    QTest::newRow("garbage") << QByteArray("hello") << QStringLiteral("not a PEM private key");
    QTest::newRow("truncated") << QByteArray(
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n")
                               << QStringLiteral("not a valid PEM private key");
    QTest::newRow("public-as-private") << readFixture("merchant_pub.pem")
                                       << QStringLiteral("not a valid PEM private key");
    QTest::newRow("encrypted") << QByteArray(
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")
                               << QStringLiteral("encrypted");
}

void TestCrypto::badPemIsAClearError()
{
    QFETCH(QByteArray, pem);
    QFETCH(QString, expected);
    auto key = PrivateKey::fromPem(pem, QStringLiteral("merchant.pem"));
    QVERIFY(!key.ok());
    QCOMPARE(key.error().code, core::ErrorCode::Misconfigured);
    QVERIFY2(key.error().internalMessage.startsWith(u"merchant.pem: "), qPrintable(key.error().internalMessage));
    QVERIFY2(key.error().internalMessage.contains(expected), qPrintable(key.error().internalMessage));

    auto pub = PublicKey::fromPem(QByteArray("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
                                  QStringLiteral("platform.pem"));
    QVERIFY(!pub.ok());
    QVERIFY2(pub.error().internalMessage.startsWith(u"platform.pem: not a valid PEM public key"),
             qPrintable(pub.error().internalMessage));
}

void TestCrypto::missingFileIsAClearError()
{
    auto key = PrivateKey::fromFile(QStringLiteral("/nonexistent/merchant.pem"));
    QVERIFY(!key.ok());
    QCOMPARE(key.error().code, core::ErrorCode::Misconfigured);
    QVERIFY(key.error().internalMessage.contains(u"/nonexistent/merchant.pem"));
}

void TestCrypto::generatedKeyRoundTripsThroughPem()
{
    auto key = generateRsaKey(2048);
    QVERIFY(key.ok());
    auto privatePem = key->toPem();
    auto publicPem = key->publicKey().toPem();
    QVERIFY(privatePem.ok() && publicPem.ok());
    QVERIFY(privatePem->startsWith("-----BEGIN PRIVATE KEY-----"));
    QVERIFY(publicPem->startsWith("-----BEGIN PUBLIC KEY-----"));
    auto reloaded = PrivateKey::fromPem(*privatePem);
    auto pub = PublicKey::fromPem(*publicPem);
    QVERIFY(reloaded.ok() && pub.ok());
    auto sig = reloaded->signBase64("x");
    QVERIFY(sig.ok() && pub->verifyBase64("x", *sig));
    QVERIFY(!generateRsaKey(1024).ok());
}

void TestCrypto::decryptsPythonCiphertext()
{
    const QJsonObject f = aesFixture();
    auto plain = aes256GcmDecrypt(field(f, "key"), field(f, "nonce"), field(f, "associated_data"),
                                  field(f, "ciphertext"));
    QVERIFY2(plain.ok(), qPrintable(plain ? QString() : plain.error().internalMessage));
    QCOMPARE(*plain, field(f, "plaintext"));
}

void TestCrypto::gcmRefusesTampering_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("nonce");
    QTest::addColumn<QByteArray>("associatedData");
    QTest::addColumn<QByteArray>("ciphertext");
    const QJsonObject f = aesFixture();
    const QByteArray key = field(f, "key"), nonce = field(f, "nonce"), ad = field(f, "associated_data"),
                     ct = field(f, "ciphertext");
    QByteArray raw = QByteArray::fromBase64(ct);
    QByteArray flipped = raw;
    flipped[3] = static_cast<char>(flipped[3] ^ 0x01);
    QByteArray flippedTag = raw;
    flippedTag[raw.size() - 1] = static_cast<char>(flippedTag[raw.size() - 1] ^ 0x80);
    QByteArray wrongKey = key;
    wrongKey[0] = 'X';
    QTest::newRow("ciphertext byte flipped") << key << nonce << ad << flipped.toBase64();
    QTest::newRow("tag byte flipped") << key << nonce << ad << flippedTag.toBase64();
    QTest::newRow("wrong associated data") << key << nonce << QByteArray("certificate") << ct;
    QTest::newRow("missing associated data") << key << nonce << QByteArray() << ct;
    QTest::newRow("wrong nonce") << key << QByteArray("fixtureNoncf") << ad << ct;
    QTest::newRow("wrong key") << wrongKey << nonce << ad << ct;
    QTest::newRow("truncated") << key << nonce << ad << raw.left(10).toBase64();
    QTest::newRow("not base64") << key << nonce << ad << QByteArray("***");
}

void TestCrypto::gcmRefusesTampering()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, nonce);
    QFETCH(QByteArray, associatedData);
    QFETCH(QByteArray, ciphertext);
    auto plain = aes256GcmDecrypt(key, nonce, associatedData, ciphertext);
    QVERIFY(!plain.ok());
    QCOMPARE(plain.error().code, core::ErrorCode::BadSignature);
}

void TestCrypto::gcmRejectsBadKeyLength()
{
    auto plain = aes256GcmDecrypt("short", "fixtureNonce", "", "AAAA");
    QVERIFY(!plain.ok());
    QCOMPARE(plain.error().code, core::ErrorCode::InvalidInput);
}

void TestCrypto::gcmEncryptDecryptRoundTrip()
{
    const QByteArray key = "0123456789abcdef0123456789ABCDEF";
    // Our encryptor must reproduce python's ciphertext exactly (same key, nonce, aad).
    const QJsonObject f = aesFixture();
    auto again = aes256GcmEncrypt(field(f, "key"), field(f, "nonce"), field(f, "associated_data"),
                                  field(f, "plaintext"));
    QVERIFY(again.ok());
    QCOMPARE(*again, field(f, "ciphertext"));
    auto empty = aes256GcmEncrypt(key, "abcdefghijkl", "", "");
    QVERIFY(empty.ok());
    auto back = aes256GcmDecrypt(key, "abcdefghijkl", "", *empty);
    QVERIFY(back.ok());
    QVERIFY(back->isEmpty());
}

void TestCrypto::randomAndNonces()
{
    auto bytes = randomBytes(32);
    QVERIFY(bytes.ok());
    QCOMPARE(bytes->size(), 32);
    auto hex = randomHex(16);
    QVERIFY(hex.ok());
    QCOMPARE(hex->size(), 32);
    QSet<QString> seen;
    for (int i = 0; i < 100; ++i) {
        auto nonce = nonceString(32);
        QVERIFY(nonce.ok());
        QCOMPARE(nonce->size(), 32);
        for (QChar c : *nonce)
            QVERIFY((c >= u'0' && c <= u'9') || (c >= u'A' && c <= u'Z'));
        seen.insert(*nonce);
    }
    QCOMPARE(seen.size(), 100);
    QVERIFY(!randomBytes(-1).ok());
}

void TestCrypto::constantTimeCompare()
{
    QVERIFY(constantTimeEquals("abc", "abc"));
    QVERIFY(!constantTimeEquals("abc", "abd"));
    QVERIFY(!constantTimeEquals("abc", "abcd"));
    QVERIFY(constantTimeEquals("", ""));
}

// FIPS 180-2's examples, and any split of a 100 KB random input into parts gives the
// digest of the whole (as QCryptographicHash computes it).
void TestCrypto::sha256KnownAnswersAndParts()
{
    const auto digest = [](std::initializer_list<QByteArrayView> parts) {
        crypto::Sha256 hash;
        for (const QByteArrayView part : parts)
            hash.add(part);
        return hash.result().toHex();
    };
    QCOMPARE(digest({"abc"}), QByteArray("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(digest({}), QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(digest({"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"}),
             QByteArray("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    auto random = crypto::randomBytes(100 * 1024);
    QVERIFY(random.ok());
    const QByteArray bytes = random.value();
    const QByteArray whole = QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
    QCOMPARE(digest({bytes}), whole);
    QCOMPARE(digest({QByteArrayView(bytes).first(1),
                     QByteArrayView(bytes).sliced(1, 4095),
                     {},
                     QByteArrayView(bytes).sliced(4096)}),
             whole);
}

QTEST_GUILESS_MAIN(TestCrypto)
#include "tst_crypto.moc"
