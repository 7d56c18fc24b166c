#pragma once

#include "core/callback/paymentnotification.h"
#include "core/common/result.h"

#include <optional>

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
    /// verify() from that memory alone: nullopt when the delivery's bytes are not there (then
    /// only verify() can judge it); else what verify() answers — the notification, or the
    /// time window's refusal. Costs a hash and a lookup, never a signature check, so it may
    /// run where a request must not wait (the HTTP event loop). Not counted in copiesReused():
    /// the caller counts what it answers this way. Default: keeps nothing.
    virtual std::optional<Result<PaymentNotification>> verifyFromMemory(const RawDelivery &delivery,
                                                                        bool checkTimeWindow, qint64 nowMs) const
    {
        Q_UNUSED(delivery);
        Q_UNUSED(checkTimeWindow);
        Q_UNUSED(nowMs);
        return std::nullopt;
    }
};

} // namespace payonce::core
