#pragma once

#include "platform/wechatpay.h"

#include "config/config.h"
#include "core/common/result.h"
#include "core/ports/paymentgateway.h"

#include <QList>
#include <QString>

#include <memory>

namespace payonce::gateway {

struct GatewayFactoryOptions {
    int timeoutMs = 10000;   ///< per HTTP exchange
    QString baseUrlOverride; ///< non-empty: used instead of the configured base_url (sim.enabled)
    QList<platform::ExtraPlatformKey> extraPlatformKeys; ///< WeChat only
};

/// Builds the WeChat Pay client from the agent's configuration: reads the merchant private
/// key and every platform public key file now (so a bad key fails at start, with the
/// file's name in the message), and returns a ready, thread-safe gateway.
/// Misconfigured when the settings are incomplete (no mchid, appid, merchant serial, or no
/// platform key at all) or a key file cannot be used.
core::Result<std::unique_ptr<core::PaymentGateway>> makeWeChatPayGateway(const config::WeChatSettings &settings,
                                                                         const GatewayFactoryOptions &options = {});

/// The same for Alipay: app private key and Alipay public key files are read now.
core::Result<std::unique_ptr<core::PaymentGateway>> makeAlipayGateway(const config::AlipaySettings &settings,
                                                                      const GatewayFactoryOptions &options = {});

} // namespace payonce::gateway
