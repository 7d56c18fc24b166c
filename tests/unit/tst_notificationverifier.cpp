// The NotificationVerifier adapter (payonce_callbacks) against signed notifications made
// by an independent tool: tests/fixtures/notifications/make-fixtures.py (python3-
// cryptography: RSA keys, SHA256withRSA, AES-256-GCM). Every case of cases.json is run
// through the verifier built from config settings, and its error code (or its fields)
// asserted. Also: the size limit before anything, the factory's refusals, and the
// notification-side signing helpers (sim/notificationsigning.h) round-tripping
// through the verifier and matching the independent tool's signatures byte for byte.
// Refund notifications (verifyRefund) likewise, from refund-cases.json.

#include "callbacks/platformnotificationverifier.h"
#include "platform/alipay.h"
#include "platform/notificationformat.h"
#include "platform/wechatpay.h"
#include "sim/notificationsigning.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace payonce;
using core::ErrorCode;

namespace {

QString fixturePath(const QString &name)
{
    return QStringLiteral(PAYONCE_FIXTURES_DIR "/notifications/") + name;
}

QByteArray readFixture(const QString &name)
{
    QFile file(fixturePath(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read fixture %s", qPrintable(name));
    return file.readAll();
}

const QJsonObject &manifest()
{
    static const QJsonObject m = QJsonDocument::fromJson(readFixture(QStringLiteral("cases.json"))).object();
    return m;
}

const QJsonObject &refundManifest()
{
    static const QJsonObject m = QJsonDocument::fromJson(readFixture(QStringLiteral("refund-cases.json"))).object();
    return m;
}

QJsonObject caseNamed(const QString &name, const QJsonObject &in = manifest())
{
    for (const QJsonValue v : in.value(QLatin1StringView("cases")).toArray()) {
        if (v.toObject().value(QLatin1StringView("name")).toString() == name)
            return v.toObject();
    }
    qFatal("no case %s", qPrintable(name));
}

config::WeChatSettings weChatSettings()
{
    config::WeChatSettings s;
    s.mchid = manifest().value(QLatin1StringView("mchid")).toString();
    s.appid = manifest().value(QLatin1StringView("appid")).toString();
    s.apiv3Key = config::Secret(manifest().value(QLatin1StringView("apiv3_key")).toString());
    const QJsonObject keys = manifest().value(QLatin1StringView("platform_keys")).toObject();
    for (auto it = keys.begin(); it != keys.end(); ++it)
        s.platformKeys.append({it.key(), fixturePath(it.value().toString())});
    return s;
}

config::AlipaySettings alipaySettings()
{
    config::AlipaySettings s;
    s.appId = manifest().value(QLatin1StringView("alipay_app_id")).toString();
    s.sellerId = manifest().value(QLatin1StringView("alipay_seller_id")).toString();
    s.alipayPublicKeyPath = fixturePath(manifest().value(QLatin1StringView("alipay_public_key")).toString());
    return s;
}

std::unique_ptr<core::NotificationVerifier> fixtureVerifier()
{
    auto verifier = callbacks::makeNotificationVerifier(weChatSettings(), alipaySettings());
    if (!verifier)
        qFatal("verifier: %s", qPrintable(verifier.error().internalMessage));
    return std::move(verifier).value();
}

std::unique_ptr<core::RefundNotificationVerifier> fixtureRefundVerifier()
{
    auto verifier = callbacks::makeRefundNotificationVerifier(weChatSettings(), alipaySettings());
    if (!verifier)
        qFatal("refund verifier: %s", qPrintable(verifier.error().internalMessage));
    return std::move(verifier).value();
}

QString refundStateName(core::RefundNotification::State state)
{
    switch (state) {
    case core::RefundNotification::State::Success: return QStringLiteral("success");
    case core::RefundNotification::State::Closed: return QStringLiteral("closed");
    case core::RefundNotification::State::Abnormal: return QStringLiteral("abnormal");
    }
    return {};
}

// A JSON null is "the platform does not say it".
QJsonValue optionalFen(const std::optional<qint64> &fen)
{
    return fen ? QJsonValue(*fen) : QJsonValue(QJsonValue::Null);
}

core::RawDelivery deliveryOf(const QJsonObject &c)
{
    core::RawDelivery d;
    d.channel = c.value(QLatin1StringView("channel")).toString() == QLatin1StringView("wechat") ? core::Channel::WeChat
                                                                                                : core::Channel::Alipay;
    const QJsonObject headers = c.value(QLatin1StringView("headers")).toObject();
    for (auto it = headers.begin(); it != headers.end(); ++it)
        d.headers.append({it.key().toLatin1(), it.value().toString().toUtf8()});
    d.body = QByteArray::fromBase64(c.value(QLatin1StringView("body_b64")).toString().toLatin1());
    d.receivedAtMs = c.value(QLatin1StringView("now_ms")).toInteger();
    return d;
}

QString codeName(ErrorCode code)
{
    return core::errorCodeName(code);
}

qint64 fixtureNowMs()
{
    return manifest().value(QLatin1StringView("now_ms")).toInteger();
}

/// A fixture case's outcome: refused with the error code it expects, or accepted (from the
/// channel it names) with the fields it lists, checked by verifyFields.
template <typename Notification>
void verifyCaseOutcome(const QJsonObject &c, const core::Result<Notification> &result,
                       void (*verifyFields)(const Notification &, const QJsonObject &))
{
    const QString expect = c.value(QLatin1StringView("expect")).toString();
    if (expect != QLatin1StringView("ok")) {
        QVERIFY2(!result.ok(), qPrintable(QStringLiteral("accepted; expected ") + expect));
        QCOMPARE(codeName(result.error().code), expect);
        return;
    }
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().internalMessage));
    QCOMPARE(core::channelName(result->channel), c.value(QLatin1StringView("channel")).toString());
    verifyFields(*result, c.value(QLatin1StringView("fields")).toObject());
}

void verifyPaymentFields(const core::PaymentNotification &n, const QJsonObject &f)
{
    QCOMPARE(n.payNo, f.value(QLatin1StringView("pay_no")).toString());
    QCOMPARE(n.paymentNo, f.value(QLatin1StringView("payment_no")).toString());
    QCOMPARE(n.amountFen, f.value(QLatin1StringView("amount_fen")).toInteger());
    QCOMPARE(n.currency, f.value(QLatin1StringView("currency")).toString());
    QCOMPARE(n.merchantId, f.value(QLatin1StringView("merchant_id")).toString());
    QCOMPARE(n.appId, f.value(QLatin1StringView("app_id")).toString());
    QCOMPARE(n.paid, f.value(QLatin1StringView("paid")).toBool());
    QCOMPARE(n.tradeState, f.value(QLatin1StringView("trade_state")).toString());
    QCOMPARE(n.eventId, f.value(QLatin1StringView("event_id")).toString());
}

void verifyRefundFields(const core::RefundNotification &n, const QJsonObject &f)
{
    QCOMPARE(refundStateName(n.state), f.value(QLatin1StringView("state")).toString());
    QCOMPARE(n.refundNo, f.value(QLatin1StringView("refund_no")).toString());
    QCOMPARE(n.refundId, f.value(QLatin1StringView("refund_id")).toString());
    QCOMPARE(n.paymentNo, f.value(QLatin1StringView("payment_no")).toString());
    QCOMPARE(n.payNo, f.value(QLatin1StringView("pay_no")).toString());
    QCOMPARE(optionalFen(n.amountFen), f.value(QLatin1StringView("amount_fen")));
    QCOMPARE(optionalFen(n.refundedTotalFen), f.value(QLatin1StringView("refunded_total_fen")));
    QCOMPARE(n.totalFen, f.value(QLatin1StringView("total_fen")).toInteger());
    QCOMPARE(n.refundStatus, f.value(QLatin1StringView("refund_status")).toString());
    QCOMPARE(n.merchantId, f.value(QLatin1StringView("merchant_id")).toString());
    QCOMPARE(n.appId, f.value(QLatin1StringView("app_id")).toString());
    QCOMPARE(n.eventId, f.value(QLatin1StringView("event_id")).toString());
}

crypto::PrivateKey privateKey(const QString &name)
{
    auto key = crypto::PrivateKey::fromPem(readFixture(name));
    if (!key)
        qFatal("fixture key %s does not load", qPrintable(name));
    return *key;
}

} // namespace

class TestNotificationVerifier : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void fixtureCases_data();
    void fixtureCases();
    void oversizedBodyRefusedBeforeAnything_data();
    void oversizedBodyRefusedBeforeAnything();
    void headerNamesAreCaseInsensitive();
    void byteIdenticalCopyIsNotVerifiedAgain_data();
    void byteIdenticalCopyIsNotVerifiedAgain();
    void copyThatDiffersInAnyByteIsVerifiedInFull();
    void reusedCopyStillMeetsTheTimeWindow();
    void memoryAloneKnowsOnlyVerifiedBytes();
    void unconfiguredChannelIsRefused();
    void factoryRefusesBadSettings();
    void weChatSigningHelpersRoundTrip();
    void alipaySignNotifyFormMatchesIndependentSignature_data();
    void alipaySignNotifyFormMatchesIndependentSignature();
    void alipayPublicKeyAsBareBase64();
    void alipaySignNotifyFormRoundTrip();
    void tradeNoFormat_data();
    void tradeNoFormat();

    void paymentAndRefundVerifiersDoNotCrossOver();
    void refundOfUnconfiguredChannelIsRefused();
    void weChatRefundSigningHelpersRoundTrip();
};

// Every case of cases.json through verify() and of refund-cases.json through verifyRefund().
void TestNotificationVerifier::fixtureCases_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("refund");
    for (const bool refund : {false, true}) {
        for (const QJsonValue v :
             (refund ? refundManifest() : manifest()).value(QLatin1StringView("cases")).toArray()) {
            const QString name = v.toObject().value(QLatin1StringView("name")).toString();
            QTest::newRow(qPrintable(name)) << name << refund;
        }
    }
}

void TestNotificationVerifier::fixtureCases()
{
    QFETCH(QString, name);
    QFETCH(bool, refund);
    static const auto verifier = fixtureVerifier();
    static const auto refundVerifier = fixtureRefundVerifier();
    const QJsonObject c = caseNamed(name, refund ? refundManifest() : manifest());
    const core::RawDelivery delivery = deliveryOf(c);
    const bool checkTimeWindow = c.value(QLatin1StringView("check_time_window")).toBool();
    const qint64 nowMs = c.value(QLatin1StringView("now_ms")).toInteger();
    if (refund)
        verifyCaseOutcome(c, refundVerifier->verifyRefund(delivery, checkTimeWindow, nowMs), verifyRefundFields);
    else
        verifyCaseOutcome(c, verifier->verify(delivery, checkTimeWindow, nowMs), verifyPaymentFields);
    // mayBeRefund's promise, on every case of both files: false only where verifyRefund()
    // refuses. (Alipay's notify_url passes a payment on without a refund's signature check.)
    if (!refundVerifier->mayBeRefund(delivery))
        QVERIFY2(!refundVerifier->verifyRefund(delivery, checkTimeWindow, nowMs).ok(),
                 "mayBeRefund() said no to a delivery verifyRefund() accepts");
    if (name == u"alipay_valid")
        QVERIFY2(!refundVerifier->mayBeRefund(delivery), "a valid Alipay payment may be a refund?");
}

void TestNotificationVerifier::oversizedBodyRefusedBeforeAnything_data()
{
    QTest::addColumn<QString>("channel");
    QTest::addColumn<qsizetype>("size");
    QTest::addColumn<bool>("configured");
    QTest::newRow("wechat 10 MB") << QStringLiteral("wechat") << qsizetype(10 * 1024 * 1024) << true;
    QTest::newRow("alipay 10 MB") << QStringLiteral("alipay") << qsizetype(10 * 1024 * 1024) << true;
    QTest::newRow("wechat 64 KiB + 1") << QStringLiteral("wechat") << qsizetype(64 * 1024 + 1) << true;
    QTest::newRow("alipay 64 KiB + 1") << QStringLiteral("alipay") << qsizetype(64 * 1024 + 1) << true;
    QTest::newRow("wechat 10 MB, no keys") << QStringLiteral("wechat") << qsizetype(10 * 1024 * 1024) << false;
}

void TestNotificationVerifier::oversizedBodyRefusedBeforeAnything()
{
    QFETCH(QString, channel);
    QFETCH(qsizetype, size);
    QFETCH(bool, configured);
    // A valid, signed delivery padded past the limit: the size alone decides, before the
    // headers, the JSON or a key are looked at (so InvalidInput even with no keys at all).
    core::RawDelivery d = deliveryOf(caseNamed(channel + QStringLiteral("_valid")));
    const QByteArray glue = d.channel == core::Channel::WeChat ? QByteArray(" ") : QByteArray("&padding=");
    const qsizetype pad = size - d.body.size() - glue.size();
    d.body.append(glue).append(QByteArray(pad, d.channel == core::Channel::WeChat ? ' ' : 'a'));
    QCOMPARE(d.body.size(), size);
    const auto verifier = configured ? fixtureVerifier()
                                     : std::make_unique<callbacks::PlatformNotificationVerifier>(
                                         callbacks::NotificationVerifierOptions{});
    const auto result = verifier->verify(d, true, fixtureNowMs());
    QVERIFY(!result.ok());
    QCOMPARE(codeName(result.error().code), QStringLiteral("invalid_input"));
}

void TestNotificationVerifier::headerNamesAreCaseInsensitive()
{
    core::RawDelivery d = deliveryOf(caseNamed(QStringLiteral("wechat_valid")));
    for (auto &header : d.headers)
        header.first = header.first.toLower();
    const auto result = fixtureVerifier()->verify(d, true, fixtureNowMs());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().internalMessage));
}

void TestNotificationVerifier::byteIdenticalCopyIsNotVerifiedAgain_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("wechat") << QStringLiteral("wechat_valid");
    QTest::newRow("alipay") << QStringLiteral("alipay_valid");
}

// A second copy of the same bytes is answered from the verifier's memory: the same
// notification, one reuse counted. A refused delivery is never remembered.
void TestNotificationVerifier::byteIdenticalCopyIsNotVerifiedAgain()
{
    QFETCH(QString, name);
    const auto verifier = fixtureVerifier();
    const core::RawDelivery d = deliveryOf(caseNamed(name));
    const auto first = verifier->verify(d, true, fixtureNowMs());
    QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().internalMessage));
    QCOMPARE(verifier->copiesReused(), quint64(0));
    const auto second = verifier->verify(d, true, fixtureNowMs() + 1000);
    QVERIFY2(second.ok(), qPrintable(second.ok() ? QString() : second.error().internalMessage));
    QCOMPARE(verifier->copiesReused(), quint64(1));
    QCOMPARE(second->payNo, first->payNo);
    QCOMPARE(second->amountFen, first->amountFen);
    QCOMPARE(second->eventId, first->eventId);
    QCOMPARE(second->paid, first->paid);

    core::RawDelivery forged = d;
    forged.body.append(' ');
    for (int i = 0; i < 2; ++i)
        QVERIFY(!verifier->verify(forged, true, fixtureNowMs()).ok());
    QCOMPARE(verifier->copiesReused(), quint64(1));
}

// Another signature over the same body, another serial, one changed body byte: each is
// not the remembered bytes, so it is verified in full and refused as it would be alone.
void TestNotificationVerifier::copyThatDiffersInAnyByteIsVerifiedInFull()
{
    const auto verifier = fixtureVerifier();
    const core::RawDelivery d = deliveryOf(caseNamed(QStringLiteral("wechat_valid")));
    QVERIFY(verifier->verify(d, true, fixtureNowMs()).ok());
    const auto refusedWith = [&](core::RawDelivery copy) {
        const auto result = verifier->verify(copy, true, fixtureNowMs());
        return result.ok() ? QStringLiteral("ok") : codeName(result.error().code);
    };
    core::RawDelivery otherSignature = d;
    for (auto &[header, value] : otherSignature.headers) {
        if (header.compare("Wechatpay-Signature", Qt::CaseInsensitive) == 0)
            value = QByteArray(value.size(), 'A');
    }
    QCOMPARE(refusedWith(otherSignature), QStringLiteral("bad_signature"));
    core::RawDelivery otherSerial = d;
    for (auto &[header, value] : otherSerial.headers) {
        if (header.compare("Wechatpay-Serial", Qt::CaseInsensitive) == 0)
            value = "NO_SUCH_SERIAL";
    }
    QCOMPARE(refusedWith(otherSerial), QStringLiteral("bad_signature"));
    core::RawDelivery otherBody = d;
    otherBody.body[otherBody.body.size() / 2] = otherBody.body.at(otherBody.body.size() / 2) == 'x' ? 'y' : 'x';
    QVERIFY(refusedWith(otherBody) != QStringLiteral("ok"));
    QCOMPARE(verifier->copiesReused(), quint64(0));
    QVERIFY(verifier->verify(d, true, fixtureNowMs()).ok());
    QCOMPARE(verifier->copiesReused(), quint64(1));
}

// A remembered copy that comes back outside the ±300 s window is refused as the platform's
// stale message it is; without the window (replay, the worker) it is still reused.
void TestNotificationVerifier::reusedCopyStillMeetsTheTimeWindow()
{
    const auto verifier = fixtureVerifier();
    const core::RawDelivery d = deliveryOf(caseNamed(QStringLiteral("wechat_valid")));
    QVERIFY(verifier->verify(d, true, fixtureNowMs()).ok());
    const auto late = verifier->verify(d, true, fixtureNowMs() + 900 * 1000);
    QVERIFY(!late.ok());
    QCOMPARE(late.error().code, ErrorCode::BadSignature);
    QVERIFY2(late.error().internalMessage.contains(QLatin1String("more than 300 s from now")),
             qPrintable(late.error().internalMessage));
    const auto early = verifier->verify(d, true, fixtureNowMs() - 900 * 1000);
    QVERIFY(!early.ok());
    QCOMPARE(early.error().code, ErrorCode::BadSignature);
    const auto worker = verifier->verify(d, false, fixtureNowMs() + 3600 * 1000);
    QVERIFY2(worker.ok(), qPrintable(worker.ok() ? QString() : worker.error().internalMessage));
    QCOMPARE(verifier->copiesReused(), quint64(3));
}

// verifyFromMemory (the HTTP event loop's look): nothing for bytes never verified, nor for
// refused ones; the remembered notification for a copy, with the time window checked; not
// counted as a reuse (its caller counts what it answers, or goes on to verify()).
void TestNotificationVerifier::memoryAloneKnowsOnlyVerifiedBytes()
{
    const auto verifier = fixtureVerifier();
    const core::RawDelivery d = deliveryOf(caseNamed(QStringLiteral("wechat_valid")));
    QVERIFY(!verifier->verifyFromMemory(d, true, fixtureNowMs()).has_value());
    core::RawDelivery forged = d;
    forged.body.append(' ');
    QVERIFY(!verifier->verify(forged, true, fixtureNowMs()).ok());
    QVERIFY(!verifier->verifyFromMemory(forged, true, fixtureNowMs()).has_value());

    const auto verified = verifier->verify(d, true, fixtureNowMs());
    QVERIFY(verified.ok());
    const auto remembered = verifier->verifyFromMemory(d, true, fixtureNowMs() + 1000);
    QVERIFY(remembered.has_value());
    QVERIFY2(remembered->ok(), qPrintable(remembered->ok() ? QString() : remembered->error().internalMessage));
    QCOMPARE((*remembered)->payNo, verified->payNo);
    QCOMPARE((*remembered)->amountFen, verified->amountFen);
    QCOMPARE((*remembered)->paymentNo, verified->paymentNo);

    const auto late = verifier->verifyFromMemory(d, true, fixtureNowMs() + 900 * 1000);
    QVERIFY(late.has_value());
    QVERIFY(!late->ok());
    QCOMPARE(late->error().code, ErrorCode::BadSignature);
    QVERIFY(verifier->verifyFromMemory(d, false, fixtureNowMs() + 900 * 1000).value().ok());
    QVERIFY(!verifier->verifyFromMemory(forged, true, fixtureNowMs()).has_value());
    QCOMPARE(verifier->copiesReused(), quint64(0));
}

void TestNotificationVerifier::unconfiguredChannelIsRefused()
{
    auto verifier = callbacks::makeNotificationVerifier(config::WeChatSettings{}, alipaySettings());
    QVERIFY(verifier.ok());
    const auto wechat = (*verifier)->verify(deliveryOf(caseNamed(QStringLiteral("wechat_valid"))), true,
                                            fixtureNowMs());
    QVERIFY(!wechat.ok());
    QCOMPARE(wechat.error().code, ErrorCode::BadSignature);
    const auto alipay = (*verifier)->verify(deliveryOf(caseNamed(QStringLiteral("alipay_valid"))), true,
                                            fixtureNowMs());
    QVERIFY(alipay.ok());
}

void TestNotificationVerifier::factoryRefusesBadSettings()
{
    config::WeChatSettings shortKey = weChatSettings();
    shortKey.apiv3Key = config::Secret(QStringLiteral("tooShort"));
    auto a = callbacks::makeNotificationVerifier(shortKey, {});
    QVERIFY(!a.ok());
    QCOMPARE(a.error().code, ErrorCode::Misconfigured);
    QVERIFY(!a.error().internalMessage.contains(QStringLiteral("tooShort"))); // a secret never in a message

    config::WeChatSettings noKeys = weChatSettings();
    noKeys.platformKeys.clear();
    auto b = callbacks::makeNotificationVerifier(noKeys, {});
    QVERIFY(!b.ok());
    QCOMPARE(b.error().code, ErrorCode::Misconfigured);
    // ... but the simulator's key alone (sim.enabled) is enough.
    auto c = callbacks::makeNotificationVerifier(
        noKeys, {},
        {platform::ExtraPlatformKey{QStringLiteral("PLATFORM_SERIAL_B"),
                                    readFixture(QStringLiteral("platform_b_pub.pem"))}});
    QVERIFY(c.ok());
    const auto viaExtra = (*c)->verify(deliveryOf(caseNamed(QStringLiteral("wechat_rotation_key_b"))), true,
                                       fixtureNowMs());
    QVERIFY(viaExtra.ok());

    config::WeChatSettings missingFile = weChatSettings();
    missingFile.platformKeys.append({QStringLiteral("GONE"), fixturePath(QStringLiteral("no_such_key.pem"))});
    auto d = callbacks::makeNotificationVerifier(missingFile, {});
    QVERIFY(!d.ok());
    QCOMPARE(d.error().code, ErrorCode::Misconfigured);

    config::AlipaySettings badAlipay = alipaySettings();
    badAlipay.alipayPublicKeyPath = fixturePath(QStringLiteral("cases.json"));
    auto e = callbacks::makeNotificationVerifier({}, badAlipay);
    QVERIFY(!e.ok());
    QCOMPARE(e.error().code, ErrorCode::Misconfigured);
}

void TestNotificationVerifier::weChatSigningHelpersRoundTrip()
{
    platform::wechat::TransactionFields t;
    t.mchid = QStringLiteral("1900000001");
    t.appid = QStringLiteral("wx0000000000000001");
    t.outTradeNo = QStringLiteral("P-roundtrip-1");
    t.transactionId = QStringLiteral("4200000000202611290000000777");
    t.successTime = QStringLiteral("2026-11-29T19:45:33+08:00");
    t.openid = QStringLiteral("oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    t.totalFen = 12345;
    const QByteArray apiv3 = manifest().value(QLatin1StringView("apiv3_key")).toString().toUtf8();
    auto resource = platform::wechat::encryptResource(apiv3, platform::wechat::transactionJson(t), "transaction",
                                                      "rtNonce00001");
    QVERIFY(resource.ok());
    const QByteArray body = platform::wechat::notificationBody(
        "EV-roundtrip", "2026-11-29T19:45:34+08:00", "TRANSACTION.SUCCESS", "\xe6\x94\xaf\xe4\xbb\x98\"q\"", *resource);
    QVERIFY2(QJsonDocument::fromJson(body).isObject(), body.constData());
    const qint64 nowSeconds = fixtureNowMs() / 1000;
    auto headers = platform::wechat::signNotification(privateKey(QStringLiteral("platform_b_key.pem")),
                                                      "PLATFORM_SERIAL_B", nowSeconds, "rtHeaderNonce", body);
    QVERIFY(headers.ok());
    core::RawDelivery d;
    d.channel = core::Channel::WeChat;
    d.headers = platform::wechat::notificationHeaders(*headers);
    d.body = body;
    const auto result = fixtureVerifier()->verify(d, true, fixtureNowMs());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().internalMessage));
    QCOMPARE(result->payNo, t.transactionId);
    QCOMPARE(result->paymentNo, t.outTradeNo);
    QCOMPARE(result->amountFen, 12345);
    QCOMPARE(result->eventId, QStringLiteral("EV-roundtrip"));
    QVERIFY(result->paid);

    // The independent tool's envelope decrypts with the same helper's inverse.
    auto fixtureEnvelope = platform::wechat::parseEnvelope(deliveryOf(caseNamed(QStringLiteral("wechat_valid"))).body);
    QVERIFY(fixtureEnvelope.ok());
    QVERIFY(platform::wechat::decryptResource(apiv3, *fixtureEnvelope).ok());
}

void TestNotificationVerifier::alipaySignNotifyFormMatchesIndependentSignature_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("alipay_valid") << QStringLiteral("alipay_valid");
    QTest::newRow("alipay_empty_values_signed") << QStringLiteral("alipay_empty_values_signed");
}

void TestNotificationVerifier::alipaySignNotifyFormMatchesIndependentSignature()
{
    // PKCS#1 v1.5 is deterministic: our signer (the simulator's) over the fixture's own
    // fields must give exactly the signature python3-cryptography wrote — with empty
    // parameters too, which Alipay keeps in a notification's signed text.
    QFETCH(QString, name);
    auto params = platform::alipay::parseForm(deliveryOf(caseNamed(name)).body);
    QVERIFY(params.ok());
    QByteArray expected;
    platform::alipay::Params unsignedParams;
    for (const auto &p : *params) {
        if (p.first == "sign")
            expected = p.second;
        else
            unsignedParams.append(p);
    }
    auto form = platform::alipay::signNotifyForm(privateKey(QStringLiteral("alipay_key.pem")), unsignedParams);
    QVERIFY(form.ok());
    auto ours = platform::alipay::parseForm(*form);
    QVERIFY(ours.ok());
    QByteArray actual;
    for (const auto &p : *ours) {
        if (p.first == "sign")
            actual = p.second;
    }
    QCOMPARE(actual, expected);
}

void TestNotificationVerifier::alipayPublicKeyAsBareBase64()
{
    // The Alipay public key as its console hands it out: bare base64, no PEM armour.
    config::AlipaySettings bare = alipaySettings();
    bare.alipayPublicKeyPath = fixturePath(QStringLiteral("alipay_pub_bare.txt"));
    auto verifier = callbacks::makeNotificationVerifier({}, bare);
    QVERIFY2(verifier.ok(), verifier.ok() ? "" : qPrintable(verifier.error().internalMessage));
    for (const char *name : {"alipay_valid", "alipay_empty_values_signed", "alipay_forged_signature"}) {
        const QJsonObject c = caseNamed(QString::fromLatin1(name));
        const auto result = verifier.value()->verify(deliveryOf(c), true,
                                                     c.value(QLatin1StringView("now_ms")).toInteger());
        QCOMPARE(result.ok() ? QStringLiteral("ok") : codeName(result.error().code),
                 c.value(QLatin1StringView("expect")).toString());
    }
}

void TestNotificationVerifier::alipaySignNotifyFormRoundTrip()
{
    const platform::alipay::Params params{{"notify_id", "N-rt-1"},
                                          {"notify_type", "trade_status_sync"},
                                          {"app_id", "2021000000000001"},
                                          {"seller_id", "2088000000000001"},
                                          {"trade_no", "2026112922001400000000000777"},
                                          {"out_trade_no", "P-rt-1"},
                                          {"trade_status", "TRADE_SUCCESS"},
                                          {"total_amount", "123.45"},
                                          {"subject", "a b&c=d%e+f \xe8\xae\xa2\xe5\x8d\x95"},
                                          {"sign_type", "RSA"}}; // replaced by RSA2
    auto form = platform::alipay::signNotifyForm(privateKey(QStringLiteral("alipay_key.pem")), params);
    QVERIFY(form.ok());
    core::RawDelivery d;
    d.channel = core::Channel::Alipay;
    d.body = *form;
    const auto result = fixtureVerifier()->verify(d, true, fixtureNowMs());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().internalMessage));
    QCOMPARE(result->amountFen, 12345);
    QCOMPARE(result->payNo, QStringLiteral("2026112922001400000000000777"));
    QCOMPARE(result->eventId, QStringLiteral("N-rt-1"));
}

void TestNotificationVerifier::tradeNoFormat_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::newRow("digits") << QStringLiteral("4200000000") << true;
    QTest::newRow("all classes") << QStringLiteral("aZ09_-") << true;
    QTest::newRow("64") << QString(64, u'x') << true;
    QTest::newRow("65") << QString(65, u'x') << false;
    QTest::newRow("empty") << QString() << false;
    QTest::newRow("space") << QStringLiteral("a b") << false;
    QTest::newRow("slash") << QStringLiteral("a/b") << false;
    QTest::newRow("non-ascii digit") << QStringLiteral("\u0661\u0662") << false;
    QTest::newRow("fullwidth") << QStringLiteral("\uff21") << false;
}

void TestNotificationVerifier::tradeNoFormat()
{
    QFETCH(QString, text);
    QFETCH(bool, valid);
    QCOMPARE(platform::isValidTradeNo(text), valid);
}

void TestNotificationVerifier::paymentAndRefundVerifiersDoNotCrossOver()
{
    // A WeChat refund notification is never a payment (REFUND.* is refused by verify()).
    const auto asPayment = fixtureVerifier()->verify(
        deliveryOf(caseNamed(QStringLiteral("wechat_refund_success"), refundManifest())), true, fixtureNowMs());
    QVERIFY(!asPayment.ok());
    QCOMPARE(asPayment.error().code, ErrorCode::InvalidInput);
    // Alipay sends a refund's trade_status_sync to the trade's notify_url: verify() reads it
    // as the trade's (paid, a duplicate at the pipeline); isAlipayRefundNotify tells it apart.
    const core::RawDelivery alipayRefund = deliveryOf(
        caseNamed(QStringLiteral("alipay_refund_partial"), refundManifest()));
    const auto alipayAsPayment = fixtureVerifier()->verify(alipayRefund, true, fixtureNowMs());
    QVERIFY(alipayAsPayment.ok());
    auto refundForm = platform::alipay::parseForm(alipayRefund.body);
    QVERIFY(refundForm.ok());
    QVERIFY(platform::alipay::isRefundNotify(*refundForm));
    auto paymentForm = platform::alipay::parseForm(deliveryOf(caseNamed(QStringLiteral("alipay_valid"))).body);
    QVERIFY(paymentForm.ok());
    QVERIFY(!platform::alipay::isRefundNotify(*paymentForm));
}

void TestNotificationVerifier::refundOfUnconfiguredChannelIsRefused()
{
    auto verifier = callbacks::makeRefundNotificationVerifier(config::WeChatSettings{}, alipaySettings());
    QVERIFY(verifier.ok());
    const auto wechat = (*verifier)->verifyRefund(
        deliveryOf(caseNamed(QStringLiteral("wechat_refund_success"), refundManifest())), true, fixtureNowMs());
    QVERIFY(!wechat.ok());
    QCOMPARE(wechat.error().code, ErrorCode::BadSignature);
    QVERIFY((*verifier)
                ->verifyRefund(deliveryOf(caseNamed(QStringLiteral("alipay_refund_partial"), refundManifest())), true,
                               fixtureNowMs())
                .ok());

    config::WeChatSettings shortKey = weChatSettings();
    shortKey.apiv3Key = config::Secret(QStringLiteral("tooShort"));
    auto refused = callbacks::makeRefundNotificationVerifier(shortKey, {});
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().code, ErrorCode::Misconfigured);
}

void TestNotificationVerifier::weChatRefundSigningHelpersRoundTrip()
{
    // The platform-side helpers (what the simulator uses) sealing a refund resource with
    // associated_data "refund": the refund verifier opens it.
    const QByteArray plaintext =
        QJsonDocument(QJsonObject{
                          {QStringLiteral("mchid"), QStringLiteral("1900000001")},
                          {QStringLiteral("out_trade_no"), QStringLiteral("P-rt-refund-1")},
                          {QStringLiteral("transaction_id"), QStringLiteral("4200000000202611290000000888")},
                          {QStringLiteral("out_refund_no"), QStringLiteral("RF-rt-1")},
                          {QStringLiteral("refund_id"), QStringLiteral("50000000382019052709732670001")},
                          {QStringLiteral("refund_status"), QStringLiteral("ABNORMAL")},
                          {QStringLiteral("amount"),
                           QJsonObject{{QStringLiteral("total"), 12345}, {QStringLiteral("refund"), 45}}},
                      })
            .toJson(QJsonDocument::Compact);
    const QByteArray apiv3 = manifest().value(QLatin1StringView("apiv3_key")).toString().toUtf8();
    auto sealed = platform::wechat::encryptResource(apiv3, plaintext, "refund", "rfNonce00001");
    QVERIFY(sealed.ok());
    platform::wechat::EncryptedResource resource = *sealed;
    resource.originalType = "refund";
    const QByteArray body = platform::wechat::notificationBody("EV-refund-rt", "2026-11-30T10:00:00+08:00",
                                                               "REFUND.ABNORMAL", "refund", resource);
    auto headers = platform::wechat::signNotification(privateKey(QStringLiteral("platform_a_key.pem")),
                                                      "PLATFORM_SERIAL_A", fixtureNowMs() / 1000, "rfHeaderNonce",
                                                      body);
    QVERIFY(headers.ok());
    core::RawDelivery d;
    d.channel = core::Channel::WeChat;
    d.headers = platform::wechat::notificationHeaders(*headers);
    d.body = body;
    const auto result = fixtureRefundVerifier()->verifyRefund(d, true, fixtureNowMs());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().internalMessage));
    QCOMPARE(result->state, core::RefundNotification::State::Abnormal);
    QCOMPARE(result->refundNo, QStringLiteral("RF-rt-1"));
    QCOMPARE(result->amountFen, std::optional<qint64>(45));
    QCOMPARE(result->totalFen, 12345);
    QCOMPARE(result->eventId, QStringLiteral("EV-refund-rt"));
    // One second outside the window: refused, as payments are.
    const auto late = fixtureRefundVerifier()->verifyRefund(d, true, fixtureNowMs() + 301 * 1000);
    QVERIFY(!late.ok());
    QCOMPARE(late.error().code, ErrorCode::BadSignature);
}

QTEST_GUILESS_MAIN(TestNotificationVerifier)
#include "tst_notificationverifier.moc"
