#include "gatewayfactory.h"

#include "alipaygateway.h"
#include "wechatpaygateway.h"

namespace payonce::gateway {

using core::Error;
using core::ErrorCode;

core::Result<std::unique_ptr<core::PaymentGateway>> makeWeChatPayGateway(const config::WeChatSettings &settings,
                                                                         const GatewayFactoryOptions &options)
{
    if (settings.mchid.isEmpty() || settings.appid.isEmpty() || settings.merchantSerial.isEmpty())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("wechat: mchid, appid and merchant_serial are required"));
    WeChatPayOptions o;
    o.mchid = settings.mchid;
    o.appid = settings.appid;
    o.merchantSerial = settings.merchantSerial;
    o.baseUrl = options.baseUrlOverride.isEmpty() ? settings.baseUrl : options.baseUrlOverride;
    o.timeoutMs = options.timeoutMs;
    auto key = crypto::PrivateKey::fromFile(settings.merchantPrivateKeyPath);
    if (!key)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("wechat.merchant_private_key: ") + key.error().internalMessage);
    o.merchantKey = *key;
    for (const config::PlatformKey &pk : settings.platformKeys) {
        auto pub = crypto::PublicKey::fromFile(pk.publicKeyPath);
        if (!pub)
            return Error::make(ErrorCode::Misconfigured, QStringLiteral("wechat.platform_keys[%1]: ").arg(pk.serial)
                                                             + pub.error().internalMessage);
        o.platformKeys.addKey(pk.serial, *pub);
    }
    for (const platform::ExtraPlatformKey &extra : options.extraPlatformKeys) {
        auto pub = crypto::PublicKey::fromPem(extra.publicKeyPem, QStringLiteral("platform key %1").arg(extra.serial));
        if (!pub)
            return pub.error();
        o.platformKeys.addKey(extra.serial, *pub);
    }
    if (o.platformKeys.isEmpty())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("wechat: no platform public key; every response must be verified"));
    return std::unique_ptr<core::PaymentGateway>(std::make_unique<WeChatPayGateway>(std::move(o)));
}

core::Result<std::unique_ptr<core::PaymentGateway>> makeAlipayGateway(const config::AlipaySettings &settings,
                                                                      const GatewayFactoryOptions &options)
{
    if (settings.appId.isEmpty())
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("alipay: app_id is required"));
    AlipayOptions o;
    o.appId = settings.appId;
    o.sellerId = settings.sellerId;
    o.baseUrl = options.baseUrlOverride.isEmpty() ? settings.baseUrl : options.baseUrlOverride;
    o.timeoutMs = options.timeoutMs;
    // Alipay hands its keys out as bare base64; PEM files are taken too.
    auto key = crypto::PrivateKey::fromFile(settings.privateKeyPath, crypto::KeyEncoding::PemOrBareBase64);
    if (!key)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("alipay.private_key: ") + key.error().internalMessage);
    o.appPrivateKey = *key;
    auto pub = crypto::PublicKey::fromFile(settings.alipayPublicKeyPath, crypto::KeyEncoding::PemOrBareBase64);
    if (!pub)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("alipay.alipay_public_key: ") + pub.error().internalMessage);
    o.alipayPublicKey = *pub;
    return std::unique_ptr<core::PaymentGateway>(std::make_unique<AlipayGateway>(std::move(o)));
}

} // namespace payonce::gateway
