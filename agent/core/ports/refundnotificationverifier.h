#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/result.h"
#include "core/settlement/refundnotification.h"

namespace payonce::core {

/// Verifies and decodes a platform's refund notification with exactly the rules of
/// NotificationVerifier (signature by the platform key and, when checkTimeWindow, the
/// ±300 s window; AES-256-GCM resource under the APIv3 key with associated data
/// "refund"; Alipay RSA2 over the sorted form). The route, a replay and a worker call the
/// same function, so a stored raw delivery is judged exactly as it was on receipt.
///
/// Errors (nothing is ever written by the verifier):
/// - BadSignature: forged or unknown-serial signature, timestamp outside the window (only
///   when checkTimeWindow), undecryptable or tampered resource, wrong associated data;
/// - InvalidInput: not a refund notification (a payment's event_type TRANSACTION.SUCCESS,
///   an Alipay notify without out_biz_no/refund_fee), or missing or malformed fields (an
///   id outside [A-Za-z0-9_-]{1,64}, an amount that is not positive whole fen / a yuan
///   decimal, a refund above the trade's total, a status the event_type contradicts).
/// Pure and thread-safe; no I/O.
class RefundNotificationVerifier {
public:
    virtual ~RefundNotificationVerifier() = default;
    virtual Result<RefundNotification> verifyRefund(const RawDelivery &delivery, bool checkTimeWindow,
                                                    qint64 nowMs) const = 0;
    /// False only when verifyRefund() would refuse the delivery whatever its signature: a
    /// look at its unverified fields (an Alipay form without out_biz_no or refund_fee), no
    /// signature checked. For a caller that meets payments and refunds on one URL (Alipay's
    /// notify_url) and would otherwise verify every payment's signature twice. Default: true.
    virtual bool mayBeRefund(const RawDelivery &delivery) const
    {
        Q_UNUSED(delivery);
        return true;
    }
};

} // namespace payonce::core
