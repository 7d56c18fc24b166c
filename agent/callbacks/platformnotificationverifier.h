#pragma once

#include "config/config.h"
#include "core/ports/notificationverifier.h"
#include "core/ports/refundnotificationverifier.h"
#include "crypto/rsakeys.h"
#include "gateway/gatewayfactory.h"
#include "platform/wechatpay.h"
#include "verifiedcopies.h"

#include <memory>

namespace payonce::callbacks {

/// What the verifier trusts. A channel without keys refuses every delivery of its own
/// (BadSignature: nothing to authenticate it with).
struct NotificationVerifierOptions {
    platform::wechat::PlatformVerifier weChatPlatformKeys; ///< by Wechatpay-Serial; several for rotation
    QByteArray apiv3Key;                                   ///< 32 bytes, the AES-256-GCM key of resources
    crypto::PublicKey alipayPublicKey;                     ///< null: Alipay not configured
};

/// WeChat Pay v3, step by step (each step one function of platform/wechatpay.h):
/// 1. body over 64 KiB → InvalidInput, before anything else is read;
/// 2. the envelope must be a JSON object of the platform's shape → InvalidInput;
/// 3. Wechatpay-Signature over "timestamp\nnonce\nbody\n" (raw body bytes) with the key
///    named by Wechatpay-Serial, Wechatpay-Timestamp within ±300 s of nowMs when
///    checkTimeWindow → BadSignature (missing header, unknown serial, outside the window,
///    signature not verifying);
/// 4. event_type TRANSACTION.SUCCESS, algorithm AEAD_AES_256_GCM → InvalidInput;
/// 5. AES-256-GCM decryption of resource (nonce, associated_data, APIv3 key) →
///    BadSignature when it does not authenticate;
/// 6. the transaction's fields → InvalidInput (platform::wechat::parseTransaction).
/// Alipay: 1; the body must be a form → InvalidInput; sign (RSA2) over the sorted
/// URL-decoded pairs without sign/sign_type → BadSignature; fields → InvalidInput.
/// Alipay carries no signed timestamp header; checkTimeWindow does not apply to it.
///
/// Not the verifier's to judge (it returns the fields, the pipeline compares them with
/// the order and the configuration): mchid/appid/seller_id/app_id being ours, the
/// amount and currency matching the order, the order existing. A notification whose
/// trade_state/trade_status is not a payment (NOTPAY, WAIT_BUYER_PAY, TRADE_CLOSED) is
/// returned with paid = false, not refused.
///
/// Refund notifications (core::RefundNotificationVerifier, verifyRefund) take the same
/// steps with the same keys; only step 4 and the fields differ: event_type REFUND.SUCCESS,
/// REFUND.ABNORMAL or REFUND.CLOSED (a payment's TRANSACTION.SUCCESS is InvalidInput, and
/// verify() refuses a refund's event_type likewise), the resource decrypted with its own
/// associated_data ("refund"), and platform::wechat::parseRefund; Alipay: the verified form must be a
/// refund's trade_status_sync (platform::alipay::isRefundNotify, else InvalidInput), then
/// platform::alipay::parseRefundNotify.
///
/// A payment notification byte-identical (body and signed headers) to one verified in the
/// last 10 minutes is answered from VerifiedCopies (16 384 kept): its timestamp window is
/// checked again, its signature and resource are not — the same bytes verify the same way.
class PlatformNotificationVerifier final : public core::NotificationVerifier, public core::RefundNotificationVerifier {
public:
    explicit PlatformNotificationVerifier(NotificationVerifierOptions options);
    core::Result<core::PaymentNotification> verify(const core::RawDelivery &delivery, bool checkTimeWindow,
                                                   qint64 nowMs) const override;
    quint64 copiesReused() const override { return m_copies->hits(); }
    std::optional<core::Result<core::PaymentNotification>> verifyFromMemory(const core::RawDelivery &delivery,
                                                                            bool checkTimeWindow,
                                                                            qint64 nowMs) const override;
    core::Result<core::RefundNotification> verifyRefund(const core::RawDelivery &delivery, bool checkTimeWindow,
                                                        qint64 nowMs) const override;
    bool mayBeRefund(const core::RawDelivery &delivery) const override;

private:
    std::optional<core::Result<core::PaymentNotification>> fromMemory(const core::RawDelivery &delivery,
                                                                      const QByteArray &key, bool checkTimeWindow,
                                                                      qint64 nowMs, bool counted) const;

    NotificationVerifierOptions m_options;
    std::unique_ptr<VerifiedCopies> m_copies; ///< verify() is const; the memory is not part of its state
};

/// The two channels as free functions (what verify() dispatches to).
core::Result<core::PaymentNotification> verifyWeChatDelivery(const platform::wechat::PlatformVerifier &platformKeys,
                                                             QByteArrayView apiv3Key, const core::RawDelivery &delivery,
                                                             bool checkTimeWindow, qint64 nowMs);
core::Result<core::PaymentNotification> verifyAlipayDelivery(const crypto::PublicKey &alipayKey,
                                                             const core::RawDelivery &delivery);
/// The refund counterparts (what verifyRefund() dispatches to).
core::Result<core::RefundNotification> verifyWeChatRefundDelivery(
    const platform::wechat::PlatformVerifier &platformKeys, QByteArrayView apiv3Key, const core::RawDelivery &delivery,
    bool checkTimeWindow, qint64 nowMs);
core::Result<core::RefundNotification> verifyAlipayRefundDelivery(const crypto::PublicKey &alipayKey,
                                                                  const core::RawDelivery &delivery);

/// Builds the verifier from the agent's settings: reads every WeChat platform public key
/// file and the Alipay public key file now, adds extraPlatformKeys (the simulator's, when
/// sim.enabled — as the gateway factory does). A channel that is not configured
/// (isConfigured() false) gets no keys. Misconfigured when a configured WeChat has an
/// APIv3 key that is not 32 bytes or no platform key at all, or a key file cannot be used.
core::Result<std::unique_ptr<core::NotificationVerifier>> makeNotificationVerifier(
    const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
    const QList<platform::ExtraPlatformKey> &extraPlatformKeys = {});
/// The same verifier, for refund notifications (same keys, same refusals).
core::Result<std::unique_ptr<core::RefundNotificationVerifier>> makeRefundNotificationVerifier(
    const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
    const QList<platform::ExtraPlatformKey> &extraPlatformKeys = {});
/// What both factories build from: the keys read and checked as described above.
core::Result<NotificationVerifierOptions> notificationVerifierOptions(
    const config::WeChatSettings &weChat, const config::AlipaySettings &alipay,
    const QList<platform::ExtraPlatformKey> &extraPlatformKeys = {});

} // namespace payonce::callbacks
