#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/result.h"

namespace payonce::core {

/// Verifies and decodes a platform notification (docs/design.md, "Callback path": verify
/// signature and timestamp window → decrypt → parse). One implementation serves both
/// channels; the HTTP route, the operator's replay and the accepted-row worker call the
/// same function, so a stored raw delivery is judged exactly as it was on receipt.
///
/// Errors (nothing is ever written by the verifier):
/// - BadSignature: forged or unknown-serial signature, timestamp outside the window
///   (only when checkTimeWindow), undecryptable or tampered resource, wrong associated
///   data — the contract's 401 FAIL, layer rejected;
/// - InvalidInput: a body that is not what the platform sends (truncated, not JSON / not
///   a form, missing fields, a pay_no outside [A-Za-z0-9_-]{1,64}, an amount that is not
///   a positive integer of fen) — 400 FAIL.
/// Pure and thread-safe; no I/O.
class NotificationVerifier {
public:
    virtual ~NotificationVerifier() = default;
    virtual Result<PaymentNotification> verify(const RawDelivery &delivery, bool checkTimeWindow,
                                               qint64 nowMs) const = 0;
    /// Deliveries answered from the verifier's memory of byte-identical copies verified
    /// before (their signature and resource not checked again; the time window is); 0 for
    /// a verifier that keeps none.
    virtual quint64 copiesReused() const { return 0; }
};

} // namespace payonce::core
