// libFuzzer target: an Alipay asynchronous notification (the raw form body) through
// exactly the functions the verifier uses: the form parser, the RSA2 check and the field
// parser — the latter also directly on every parsed form, since a mutated input rarely
// keeps a valid signature. Seeds: tests/fuzz/corpus/alipay_notification (the signed
// fixture cases).

#include "callbacks/platformnotificationverifier.h"
#include "platform/alipay.h"
#include "platform/notificationformat.h"
#include "platform/wechatpay.h"

#include <QFile>

#include <cstdint>
#include <cstdlib>

using namespace payonce;

namespace {

crypto::PublicKey *alipayKey = nullptr;

void checkInvariants(const core::Result<core::PaymentNotification> &r)
{
    if (!r.ok()) {
        const auto code = r.error().code;
        if (code != core::ErrorCode::InvalidInput && code != core::ErrorCode::BadSignature)
            std::abort();
        return;
    }
    if (!platform::isValidTradeNo(r->payNo) || !platform::isValidTradeNo(r->paymentNo) || r->amountFen <= 0)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    QFile file(QStringLiteral(PAYONCE_FIXTURES_DIR "/notifications/alipay_pub.pem"));
    if (!file.open(QIODevice::ReadOnly))
        std::abort();
    auto key = crypto::PublicKey::fromPem(file.readAll());
    if (!key)
        std::abort();
    alipayKey = new crypto::PublicKey(*key);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    core::RawDelivery delivery;
    delivery.channel = core::Channel::Alipay;
    delivery.body = QByteArray(reinterpret_cast<const char *>(data), qsizetype(size));

    checkInvariants(callbacks::verifyAlipayDelivery(*alipayKey, delivery));
    if (auto params = platform::alipay::parseForm(delivery.body)) {
        (void)platform::alipay::verifySignature(*alipayKey, *params);
        checkInvariants(platform::alipay::parseNotify(*params));
        // What the signature covers is a function of the pairs alone, in any order.
        platform::alipay::Params reversed(params->crbegin(), params->crend());
        if (platform::alipay::signContent(*params, platform::alipay::SignContentKind::Notification)
            != platform::alipay::signContent(reversed, platform::alipay::SignContentKind::Notification))
            std::abort();
    }
    return 0;
}
