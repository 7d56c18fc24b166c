// libFuzzer target: a WeChat Pay v3 notification through exactly the functions the
// verifier (routes, replay, worker) uses. Input: "Name: value\n" header lines, an empty
// line, then the raw body (no empty line: all body, no headers). The seeds
// (tests/fuzz/corpus/wechat_notification) are the signed fixture cases.
//
// A mutated input rarely keeps a valid signature, so the steps behind it are also driven
// directly: the envelope checks, the decryption (which must refuse, never crash) and the
// transaction parser on the body as if it had been decrypted.

#include "callbacks/platformnotificationverifier.h"
#include "platform/alipay.h"
#include "platform/notificationformat.h"
#include "platform/wechatpay.h"

#include <QFile>

#include <cstdint>
#include <cstdlib>

using namespace payonce;

namespace {

platform::wechat::PlatformVerifier *platformKeys = nullptr;
const QByteArray apiv3Key = "payonceFixtureApiV3Key0123456789";
constexpr qint64 kNowMs = 1764416733000; // the fixtures' clock

crypto::PublicKey loadKey(const char *name)
{
    QFile file(QStringLiteral(PAYONCE_FIXTURES_DIR "/notifications/") + QString::fromLatin1(name));
    if (!file.open(QIODevice::ReadOnly))
        std::abort();
    auto key = crypto::PublicKey::fromPem(file.readAll());
    if (!key)
        std::abort();
    return *key;
}

core::RawDelivery deliveryOf(QByteArrayView data)
{
    core::RawDelivery d;
    d.channel = core::Channel::WeChat;
    const qsizetype split = data.indexOf("\n\n");
    if (split < 0) {
        d.body = data.toByteArray();
        return d;
    }
    const QByteArray head = data.first(split).toByteArray();
    for (const QByteArray &line : head.split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0)
            d.headers.append({line.first(colon).trimmed(), line.sliced(colon + 1).trimmed()});
    }
    d.body = data.sliced(split + 2).toByteArray();
    return d;
}

void checkInvariants(const core::Result<core::PaymentNotification> &r)
{
    if (!r.ok()) {
        const auto code = r.error().code;
        if (code != core::ErrorCode::InvalidInput && code != core::ErrorCode::BadSignature)
            std::abort(); // the port promises these two only
        return;
    }
    if (!platform::isValidTradeNo(r->payNo) || r->amountFen <= 0)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    platformKeys = new platform::wechat::PlatformVerifier;
    platformKeys->addKey(QStringLiteral("PLATFORM_SERIAL_A"), loadKey("platform_a_pub.pem"));
    platformKeys->addKey(QStringLiteral("PLATFORM_SERIAL_B"), loadKey("platform_b_pub.pem"));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    const core::RawDelivery delivery = deliveryOf(input);

    checkInvariants(callbacks::verifyWeChatDelivery(*platformKeys, apiv3Key, delivery, true, kNowMs));
    checkInvariants(callbacks::verifyWeChatDelivery(*platformKeys, apiv3Key, delivery, false, kNowMs));

    if (auto envelope = platform::wechat::parseEnvelope(delivery.body)) {
        (void)platform::wechat::checkEnvelope(*envelope);
        (void)platform::wechat::decryptResource(apiv3Key, *envelope);
    }
    if (delivery.body.size() <= platform::kMaxNotificationBodyBytes)
        checkInvariants(platform::wechat::parseTransaction(delivery.body, QStringLiteral("EV-fuzz")));
    return 0;
}
