#include "platformnotificationverifier.h"

#include "platform/alipay.h"
#include "platform/notificationformat.h"
#include "platform/wechatpay.h"

#include <limits>

namespace payonce::callbacks {

using core::Error;
using core::ErrorCode;
using core::PaymentNotification;
using core::RawDelivery;
using core::Result;

namespace {

Error tooLarge(qsizetype size)
{
    return Error::make(ErrorCode::InvalidInput,
                       QStringLiteral("notification body of %1 bytes is over the %2-byte limit")
                           .arg(size)
                           .arg(platform::kMaxNotificationBodyBytes));
}

// With checkTimeWindow false (replay, the accepted-row worker) any signed timestamp is
// accepted: a window this wide cannot overflow nowSeconds ± window for any clock value
// that fits in a qint64 of milliseconds.
constexpr qint64 kUnlimitedWindowSeconds = std::numeric_limits<qint64>::max() / 4;

} // namespace

namespace {

struct OpenedWeChatDelivery {
    platform::wechat::Envelope envelope;
    QByteArray plaintext;
};

// Steps 1-5 of a WeChat delivery, payment or refund alike; checkContent is step 4.
Result<OpenedWeChatDelivery> openWeChatDelivery(const platform::wechat::PlatformVerifier &platformKeys,
                                                QByteArrayView apiv3Key, const RawDelivery &delivery,
                                                bool checkTimeWindow, qint64 nowMs,
                                                Result<void> (*checkContent)(const platform::wechat::Envelope &))
{
    if (delivery.body.size() > platform::kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    auto envelope = platform::wechat::parseEnvelope(delivery.body);
    if (!envelope)
        return envelope.error();
    const qint64 window = checkTimeWindow ? platform::wechat::kDefaultTimestampWindowSeconds : kUnlimitedWindowSeconds;
    const qint64 nowSeconds = checkTimeWindow ? nowMs / 1000 : 0;
    if (auto signature = platformKeys.verify(platform::wechat::signedHeaders(delivery), delivery.body, nowSeconds,
                                             window);
        !signature)
        return Error::make(ErrorCode::BadSignature,
                           QStringLiteral("WeChat notification: ") + signature.error().internalMessage);
    if (auto content = checkContent(*envelope); !content)
        return content.error();
    auto plaintext = platform::wechat::decryptResource(apiv3Key, *envelope);
    if (!plaintext)
        return plaintext.error();
    return OpenedWeChatDelivery{std::move(envelope).value(), std::move(plaintext).value()};
}

// The size limit, the form and its RSA2 signature: an Alipay delivery of any kind.
Result<platform::alipay::Params> verifiedAlipayForm(const crypto::PublicKey &alipayKey, const RawDelivery &delivery)
{
    if (delivery.body.size() > platform::kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    auto params = platform::alipay::parseForm(delivery.body);
    if (!params)
        return params.error();
    if (auto signature = platform::alipay::verifySignature(alipayKey, *params); !signature)
        return signature.error();
    return params;
}

} // namespace

Result<PaymentNotification> verifyWeChatDelivery(const platform::wechat::PlatformVerifier &platformKeys,
                                                 QByteArrayView apiv3Key, const RawDelivery &delivery,
                                                 bool checkTimeWindow, qint64 nowMs)
{
    auto opened = openWeChatDelivery(platformKeys, apiv3Key, delivery, checkTimeWindow, nowMs,
                                     &platform::wechat::checkEnvelope);
    if (!opened)
        return opened.error();
    return platform::wechat::parseTransaction(opened->plaintext, opened->envelope.id);
}

Result<PaymentNotification> verifyAlipayDelivery(const crypto::PublicKey &alipayKey, const RawDelivery &delivery)
{
    auto params = verifiedAlipayForm(alipayKey, delivery);
    if (!params)
        return params.error();
    return platform::alipay::parseNotify(*params);
}

Result<core::RefundNotification> verifyWeChatRefundDelivery(const platform::wechat::PlatformVerifier &platformKeys,
                                                            QByteArrayView apiv3Key, const RawDelivery &delivery,
                                                            bool checkTimeWindow, qint64 nowMs)
{
    auto opened = openWeChatDelivery(platformKeys, apiv3Key, delivery, checkTimeWindow, nowMs,
                                     &platform::wechat::checkRefundEnvelope);
    if (!opened)
        return opened.error();
    return platform::wechat::parseRefund(opened->plaintext, opened->envelope.id, opened->envelope.eventType);
}

Result<core::RefundNotification> verifyAlipayRefundDelivery(const crypto::PublicKey &alipayKey,
                                                            const RawDelivery &delivery)
{
    auto params = verifiedAlipayForm(alipayKey, delivery);
    if (!params)
        return params.error();
    if (!platform::alipay::isRefundNotify(*params))
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("Alipay notification is not a refund's: no out_biz_no or refund_fee"));
    return platform::alipay::parseRefundNotify(*params);
}

namespace {
// Copies of one notification arrive within seconds to minutes (a replay on a timeout, a
// redelivery, two agents, the platform's first retries 15 s apart); at a thousand
// notifications a second, 16 384 are the last 16 s. Two bench runs peaked at 44.0 MB of
// RSS keeping 4 096 and 44.8 MB keeping 6 939: about 0.3 KB each, so some 5 MB when full
// (docs/benchmark.md, "Step 4"). 4 096 were too few for the bench's duplicates, which come
// back after 7 000 others: none was reused.
constexpr int kVerifiedCopiesKept = 16384;
constexpr std::chrono::minutes kVerifiedCopiesTtl{10};
} // namespace

PlatformNotificationVerifier::PlatformNotificationVerifier(NotificationVerifierOptions options)
    : m_options(std::move(options)), m_copies(std::make_unique<VerifiedCopies>(kVerifiedCopiesKept, kVerifiedCopiesTtl))
{
}

namespace {

// The size limit, then the channel's keys: a channel without them refuses its deliveries.
template <typename T, typename WeChatVerify, typename AlipayVerify>
Result<T> byChannel(const NotificationVerifierOptions &options, const RawDelivery &delivery, WeChatVerify weChat,
                    AlipayVerify alipay)
{
    if (delivery.body.size() > platform::kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    switch (delivery.channel) {
    case core::Channel::WeChat:
        if (options.weChatPlatformKeys.isEmpty())
            return Error::make(ErrorCode::BadSignature,
                               QStringLiteral("WeChat Pay is not configured: no platform key"));
        return weChat();
    case core::Channel::Alipay:
        if (options.alipayPublicKey.isNull())
            return Error::make(ErrorCode::BadSignature,
                               QStringLiteral("Alipay is not configured: no Alipay public key"));
        return alipay();
    }
    return Error::make(ErrorCode::Internal, QStringLiteral("unknown channel"));
}

} // namespace

std::optional<Result<PaymentNotification>> PlatformNotificationVerifier::fromMemory(const RawDelivery &delivery,
                                                                                    const QByteArray &key,
                                                                                    bool checkTimeWindow, qint64 nowMs,
                                                                                    bool counted) const
{
    auto copy = counted ? m_copies->find(key) : m_copies->peek(key);
    if (!copy)
        return std::nullopt;
    // The same bytes verified before; only the time has moved on since.
    if (delivery.channel == core::Channel::WeChat && checkTimeWindow) {
        if (auto inWindow = platform::wechat::checkTimestampWindow(delivery.header("Wechatpay-Timestamp"),
                                                                   nowMs / 1000);
            !inWindow)
            return Result<PaymentNotification>(Error::make(
                ErrorCode::BadSignature, QStringLiteral("WeChat notification: ") + inWindow.error().internalMessage));
    }
    return Result<PaymentNotification>(std::move(*copy));
}

std::optional<Result<PaymentNotification>> PlatformNotificationVerifier::verifyFromMemory(const RawDelivery &delivery,
                                                                                          bool checkTimeWindow,
                                                                                          qint64 nowMs) const
{
    // Over the size limit: never remembered, and not hashed.
    if (delivery.body.size() > platform::kMaxNotificationBodyBytes)
        return std::nullopt;
    // Not counted here: the caller either answers the copy itself (and counts it) or goes on
    // to verify(), which counts it.
    return fromMemory(delivery, VerifiedCopies::keyOf(delivery), checkTimeWindow, nowMs, false);
}

Result<PaymentNotification> PlatformNotificationVerifier::verify(const RawDelivery &delivery, bool checkTimeWindow,
                                                                 qint64 nowMs) const
{
    // Over the size limit: refused before its bytes are hashed, as before they are parsed.
    if (delivery.body.size() > platform::kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    const QByteArray key = VerifiedCopies::keyOf(delivery);
    if (auto remembered = fromMemory(delivery, key, checkTimeWindow, nowMs, true))
        return std::move(*remembered);
    auto verified = byChannel<PaymentNotification>(
        m_options, delivery,
        [&] {
            return verifyWeChatDelivery(m_options.weChatPlatformKeys, m_options.apiv3Key, delivery, checkTimeWindow,
                                        nowMs);
        },
        [&] { return verifyAlipayDelivery(m_options.alipayPublicKey, delivery); });
    if (verified.ok())
        m_copies->remember(key, verified.value());
    return verified;
}

bool PlatformNotificationVerifier::mayBeRefund(const RawDelivery &delivery) const
{
    // Alipay: verifyAlipayRefundDelivery refuses a verified form that is not a refund's, and
    // a form that does not parse; neither needs the signature to be told. WeChat Pay's
    // refunds have a URL of their own, and its envelope is judged after the signature.
    if (delivery.channel != core::Channel::Alipay || delivery.body.size() > platform::kMaxNotificationBodyBytes)
        return true;
    const auto params = platform::alipay::parseForm(delivery.body);
    return params && platform::alipay::isRefundNotify(*params);
}

Result<core::RefundNotification> PlatformNotificationVerifier::verifyRefund(const RawDelivery &delivery,
                                                                            bool checkTimeWindow, qint64 nowMs) const
{
    return byChannel<core::RefundNotification>(
        m_options, delivery,
        [&] {
            return verifyWeChatRefundDelivery(m_options.weChatPlatformKeys, m_options.apiv3Key, delivery,
                                              checkTimeWindow, nowMs);
        },
        [&] { return verifyAlipayRefundDelivery(m_options.alipayPublicKey, delivery); });
}

Result<NotificationVerifierOptions> notificationVerifierOptions(
    const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
    const QList<platform::ExtraPlatformKey> &extraPlatformKeys)
{
    NotificationVerifierOptions o;
    if (weChat.isConfigured()) {
        o.apiv3Key = weChat.apiv3Key.reveal().toUtf8();
        if (o.apiv3Key.size() != 32)
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("wechat.apiv3_key: must be 32 bytes, is %1").arg(o.apiv3Key.size()));
        for (const config::PlatformKey &pk : weChat.platformKeys) {
            auto pub = crypto::PublicKey::fromFile(pk.publicKeyPath);
            if (!pub)
                return Error::make(ErrorCode::Misconfigured, QStringLiteral("wechat.platform_keys[%1]: ").arg(pk.serial)
                                                                 + pub.error().internalMessage);
            o.weChatPlatformKeys.addKey(pk.serial, *pub);
        }
        for (const platform::ExtraPlatformKey &extra : extraPlatformKeys) {
            auto pub = crypto::PublicKey::fromPem(extra.publicKeyPem,
                                                  QStringLiteral("platform key %1").arg(extra.serial));
            if (!pub)
                return pub.error();
            o.weChatPlatformKeys.addKey(extra.serial, *pub);
        }
        if (o.weChatPlatformKeys.isEmpty())
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("wechat: no platform public key; notifications cannot be verified"));
    }
    if (alipay.isConfigured()) {
        auto pub = crypto::PublicKey::fromFile(alipay.alipayPublicKeyPath, crypto::KeyEncoding::PemOrBareBase64);
        if (!pub)
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("alipay.alipay_public_key: ") + pub.error().internalMessage);
        o.alipayPublicKey = *pub;
    }
    return o;
}

Result<std::unique_ptr<core::NotificationVerifier>> makeNotificationVerifier(
    const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
    const QList<platform::ExtraPlatformKey> &extraPlatformKeys)
{
    auto options = notificationVerifierOptions(weChat, alipay, extraPlatformKeys);
    if (!options)
        return options.error();
    return std::unique_ptr<core::NotificationVerifier>(
        std::make_unique<PlatformNotificationVerifier>(std::move(options).value()));
}

Result<std::unique_ptr<core::RefundNotificationVerifier>> makeRefundNotificationVerifier(
    const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
    const QList<platform::ExtraPlatformKey> &extraPlatformKeys)
{
    auto options = notificationVerifierOptions(weChat, alipay, extraPlatformKeys);
    if (!options)
        return options.error();
    return std::unique_ptr<core::RefundNotificationVerifier>(
        std::make_unique<PlatformNotificationVerifier>(std::move(options).value()));
}

} // namespace payonce::callbacks
