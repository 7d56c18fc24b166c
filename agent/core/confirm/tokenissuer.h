#pragma once

#include "core/confirm/paymentoutcome.h"

#include <QString>

#include <chrono>

namespace payonce::core {

class PaymentStore;
class TokenStore;

/// Issues the L2 token for one payment attempt (POST /api/v1/payments/token).
///
/// The order must exist (404 order_not_found), belong to the user (403 order_not_yours)
/// and be PENDING (409 order_state_conflict with "status"); then a fresh token is stored
/// under paymentTokenScope(user, order) for `ttl` (300 s), replacing any earlier one for
/// that scope, and the outcome is TokenIssued {"token","expires_in"}.
///
/// With the key store unreachable (docs/design.md rule 5) a random token is still answered, but
/// not stored: the confirm's L2 then cannot decide, and the durable layers do.
/// Thread-safe; not idempotent (each call makes a new token); retrying is safe.
class TokenIssuer {
public:
    TokenIssuer(PaymentStore &payments, TokenStore &tokens, std::chrono::seconds ttl = std::chrono::seconds(300))
        : m_payments(payments), m_tokens(tokens), m_ttl(ttl)
    {
    }

    PaymentOutcome issueToken(qint64 userId, const QString &orderNo);

private:
    PaymentStore &m_payments;
    TokenStore &m_tokens;
    std::chrono::seconds m_ttl;
};

} // namespace payonce::core
