#pragma once

#include "core/result.h"
#include "crypto/rsakeys.h"

#include <QHostAddress>
#include <QString>
#include <QStringList>

namespace payonce::sim {

/// payonce-sim's settings, from --config FILE (the agent's config shape; see below) and
/// flags, flags winning:
///
///   --listen HOST:PORT               default sim.listen of the file, else 127.0.0.1:8090
///   --merchant-public-key PEM        verifies WeChat request signatures (and Alipay's,
///                                    unless --alipay-app-public-key is given)
///   --alipay-app-public-key PEM      verifies Alipay request signatures
///   --mchid, --appid                 WeChat merchant ids to insist on (else any)
///   --alipay-app-id, --alipay-seller-id
///   --platform-serial SERIAL         default PAYONCE_SIM_0001
///   --platform-key-out PATH          where to write the platform public key PEM once
///                                    listening (a readiness signal for scripts)
///   --exit-with-parent               SIGTERM ourselves when the starting process dies
///                                    (tests and the agent: no orphaned simulator)
///
/// From the file: wechat.mchid / appid / merchant_serial, wechat.merchant_public_key (or,
/// for the demo, the public half of wechat.merchant_private_key), alipay.app_id /
/// seller_id, alipay.app_public_key (or the public half of alipay.private_key),
/// sim.listen. Relative paths are relative to the file. Errors are Misconfigured, one line.
struct SimOptions {
    QHostAddress address = QHostAddress::LocalHost;
    quint16 port = 8090;
    QString mchid, appid, merchantSerial;
    crypto::PublicKey wechatMerchantKey;
    QString alipayAppId, alipaySellerId;
    crypto::PublicKey alipayAppKey;
    QString platformSerial = QStringLiteral("PAYONCE_SIM_0001");
    QString platformKeyOut;
    bool exitWithParent = false;
    bool showHelp = false;
    QString helpText;
};

core::Result<SimOptions> parseSimOptions(const QStringList &arguments);

} // namespace payonce::sim
