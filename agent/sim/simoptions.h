#pragma once

#include "core/common/result.h"
#include "crypto/rsakeys.h"

#include <QHostAddress>
#include <QProcessEnvironment>
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
///   --apiv3-key KEY                  the merchant's WeChat APIv3 key (32 printable ASCII
///                                    characters) that encrypts notification resources;
///                                    prefer PAYONCE_WECHAT_APIV3_KEY in the environment
///                                    (a flag is visible in ps). Without it WeChat
///                                    notifications are not sent (recorded as an error).
///   --time-scale X                   multiplies the platforms' retry intervals (default
///                                    1.0; 0.001 turns WeChat's 24 h into about 86 s)
///
/// From the file: wechat.mchid / appid / merchant_serial, wechat.merchant_public_key (or,
/// for the demo, the public half of wechat.merchant_private_key), alipay.app_id /
/// seller_id, alipay.app_public_key (or the public half of alipay.private_key),
/// wechat.apiv3_key, sim.listen. Relative paths are relative to the file. The APIv3 key is
/// taken from the file, then PAYONCE_WECHAT_APIV3_KEY, then --apiv3-key (later wins, as
/// the agent does). Errors are Misconfigured, one line, never containing the key.
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
    QByteArray apiv3Key;    ///< empty: WeChat notifications cannot be encrypted
    double timeScale = 1.0; ///< > 0
    bool showHelp = false;
    QString helpText;
};

core::Result<SimOptions> parseSimOptions(
    const QStringList &arguments, const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment());

/// Why key is not a usable APIv3 key, or empty when it is (32 printable ASCII bytes).
QString apiv3KeyProblem(QByteArrayView key);

} // namespace payonce::sim
