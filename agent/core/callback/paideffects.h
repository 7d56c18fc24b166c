#pragma once

#include "core/ports/callbackstore.h"

namespace payonce::core {

/// What writePaidEffects() did besides its writes.
struct PaidEffectsWritten {
    /// Effects whose key was written already (by another path): this call wrote nothing for
    /// them. Counted as decisions of the side_effect layer once the transaction commits.
    int keysFoundTaken = 0;
    /// Oversold findings that are new: published once the transaction commits.
    QList<CallbackFinding> newFindings;
};

/// Raises `finding` in the open transaction; a new one (not seen before) is appended to
/// newFindings, to be published once the transaction commits.
Result<void> raiseFindingIn(CallbackTransaction &tx, const CallbackFinding &finding,
                            QList<CallbackFinding> &newFindings);

/// Everything an order is owed once the open transaction has made it PAID by
/// `notification`, each effect on its own key (docs/design.md, "Callback path"): coupon,
/// points, the order.paid outbox event, the payment record, and last the stock. The SKU
/// rows are what concurrent payments of one product queue on (a flash sale: every order on
/// one row), so they are locked as late before COMMIT as the transaction allows. A short
/// stock writes no stock_log row and raises an oversold finding; a stock_log row another
/// path wrote already gives back what this transaction took. `keySuffix` is appended to
/// every effect's key (QA's side_effect switch: a nonce, so the keys no longer dedupe);
/// `fence` is written with each effect. Adds to `written` (the caller resets it for each
/// run of its transaction).
Result<void> writePaidEffects(CallbackTransaction &tx, const CallbackOrder &order,
                              const PaymentNotification &notification, qint64 fence, const QString &keySuffix,
                              const QString &traceId, PaidEffectsWritten &written);

} // namespace payonce::core
