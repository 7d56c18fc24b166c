#pragma once

// The rows of the callback tables as the callback store and its transaction both read and
// write them: the order a notification pays, a delivery's row. Internal to the SQL adapters.

#include "session.h"

#include "core/ports/callbackstore.h"

#include <QString>
#include <QVariant>
#include <QVariantList>

#include <optional>

namespace payonce::sql::callbackrows {

/// NULL for an empty text.
QVariant textOrNull(const QString &text);

/// The order whose order_no `orderNoSql` yields (an expression of the statement's first
/// binds) and its items, in one statement on a kept prepared statement: the callback path
/// reads an order for every new notification.
core::Result<std::optional<core::CallbackOrder>> readOrderWhere(Session &session, const QString &orderNoSql,
                                                                const QVariantList &binds);
core::Result<std::optional<core::CallbackOrder>> readOrder(Session &session, const QString &orderNo);

/// n '?' placeholders, comma-separated.
QString marks(int n);

/// callback_deliveries' INSERT up to its VALUES, and how many values a row has.
extern const QString kInsertDeliveryHead;
inline constexpr int kDeliveryColumns = 12;
/// A delivery's values, in kInsertDeliveryHead's order. The body and headers of a verified
/// delivery only (an unverified body is not ours to keep; a seen copy comes without one).
QVariantList deliveryValues(const core::DeliveryRecord &delivery);
/// One callback_deliveries row in the caller's transaction; its id.
core::Result<qint64> insertDelivery(Session &session, const core::DeliveryRecord &delivery);

} // namespace payonce::sql::callbackrows
