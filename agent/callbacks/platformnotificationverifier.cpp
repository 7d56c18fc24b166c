#include "platformnotificationverifier.h"

#include "notificationparsing.h"

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
    return Error::make(ErrorCode::InvalidInput, QStringLiteral("notification body of %1 bytes is over the %2-byte limit")
                                                    .arg(size)
                                                    .arg(kMaxNotificationBodyBytes));
}

// With checkTimeWindow false (replay, the accepted-row worker) any signed timestamp is
// accepted: a window this wide cannot overflow nowSeconds ± window for any clock value
// that fits in a qint64 of milliseconds.
constexpr qint64 kUnlimitedWindowSeconds = std::numeric_limits<qint64>::max() / 4;

} // namespace

Result<PaymentNotification> verifyWeChatDelivery(const gateway::wechat::PlatformVerifier &platformKeys,
                                                 QByteArrayView apiv3Key, const RawDelivery &delivery,
                                                 bool checkTimeWindow, qint64 nowMs)
{
    if (delivery.body.size() > kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    auto envelope = parseWeChatEnvelope(delivery.body);
    if (!envelope)
        return envelope.error();
    const qint64 window = checkTimeWindow ? gateway::wechat::kDefaultTimestampWindowSeconds : kUnlimitedWindowSeconds;
    const qint64 nowSeconds = checkTimeWindow ? nowMs / 1000 : 0;
    if (auto signature = platformKeys.verify(weChatSignedHeaders(delivery), delivery.body, nowSeconds, window); !signature)
        return Error::make(ErrorCode::BadSignature, QStringLiteral("WeChat notification: ") + signature.error().internalMessage);
    if (auto content = checkWeChatEnvelope(*envelope); !content)
        return content.error();
    auto plaintext = decryptWeChatResource(apiv3Key, *envelope);
    if (!plaintext)
        return plaintext.error();
    return parseWeChatTransaction(*plaintext, envelope->id);
}

Result<PaymentNotification> verifyAlipayDelivery(const crypto::PublicKey &alipayKey, const RawDelivery &delivery)
{
    if (delivery.body.size() > kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    auto params = parseForm(delivery.body);
    if (!params)
        return params.error();
    if (auto signature = verifyAlipaySignature(alipayKey, *params); !signature)
        return signature.error();
    return parseAlipayNotify(*params);
}

PlatformNotificationVerifier::PlatformNotificationVerifier(NotificationVerifierOptions options)
    : m_options(std::move(options))
{
}

Result<PaymentNotification> PlatformNotificationVerifier::verify(const RawDelivery &delivery, bool checkTimeWindow,
                                                                 qint64 nowMs) const
{
    if (delivery.body.size() > kMaxNotificationBodyBytes)
        return tooLarge(delivery.body.size());
    switch (delivery.channel) {
    case core::Channel::WeChat:
        if (m_options.weChatPlatformKeys.isEmpty())
            return Error::make(ErrorCode::BadSignature, QStringLiteral("WeChat Pay is not configured: no platform key"));
        return verifyWeChatDelivery(m_options.weChatPlatformKeys, m_options.apiv3Key, delivery, checkTimeWindow, nowMs);
    case core::Channel::Alipay:
        if (m_options.alipayPublicKey.isNull())
            return Error::make(ErrorCode::BadSignature, QStringLiteral("Alipay is not configured: no Alipay public key"));
        return verifyAlipayDelivery(m_options.alipayPublicKey, delivery);
    }
    return Error::make(ErrorCode::Internal, QStringLiteral("unknown channel"));
}

Result<std::unique_ptr<core::NotificationVerifier>>
makeNotificationVerifier(const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
                         const QList<gateway::ExtraPlatformKey> &extraPlatformKeys)
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
                return Error::make(ErrorCode::Misconfigured,
                                   QStringLiteral("wechat.platform_keys[%1]: ").arg(pk.serial) + pub.error().internalMessage);
            o.weChatPlatformKeys.addKey(pk.serial, *pub);
        }
        for (const gateway::ExtraPlatformKey &extra : extraPlatformKeys) {
            auto pub = crypto::PublicKey::fromPem(extra.publicKeyPem, QStringLiteral("platform key %1").arg(extra.serial));
            if (!pub)
                return pub.error();
            o.weChatPlatformKeys.addKey(extra.serial, *pub);
        }
        if (o.weChatPlatformKeys.isEmpty())
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("wechat: no platform public key; notifications cannot be verified"));
    }
    if (alipay.isConfigured()) {
        auto pub = crypto::PublicKey::fromFile(alipay.alipayPublicKeyPath);
        if (!pub)
            return Error::make(ErrorCode::Misconfigured, QStringLiteral("alipay.alipay_public_key: ") + pub.error().internalMessage);
        o.alipayPublicKey = *pub;
    }
    return std::unique_ptr<core::NotificationVerifier>(std::make_unique<PlatformNotificationVerifier>(std::move(o)));
}

} // namespace payonce::callbacks
