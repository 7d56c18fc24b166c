#pragma once

#include "core/orders/setupservice.h"

#include <QJsonObject>

namespace payonce::core {

/// JSON codec of the set-up API (docs/openapi.yaml, "Orders and stock"): request bodies into value
/// types, value types into response bodies. Decoding checks presence and JSON types
/// (and turns the amount string into fen); the business rules (id charset, positive
/// numbers, distinct SKUs) are SetupService's. Errors name the field: a missing or
/// mistyped field is InvalidRequest, an amount that is not a decimal string (a JSON
/// number included: money is never a float on the wire) or not a positive decimal with
/// at most 2 places is InvalidAmount. Pure; any thread.
namespace setupcodec {

/// {"order_no","user_id","amount","items":[{"sku_id","qty"}],
///  "reward_coupon_template"?: string|null, "reward_points"?: integer|null}
SetupResult<OrderDraft> decodeOrderDraft(const QJsonObject &body);

/// {"stock": integer}
SetupResult<qint64> decodeStock(const QJsonObject &body);

/// {"sku_id","stock"}
QJsonObject encodeSkuStock(const SkuStock &sku);

/// {"order_no","user_id","amount":"99.00","status","version","pay_no"(null when none),
///  "items":[{"sku_id","qty"}],"reward_coupon_template"(null when none),"reward_points",
///  "payments":[{"payment_no","channel","status","attempt","amount","code_url","last_error"}],
///  "effects":{"stock":[{"sku_id","qty"}],"coupons":[{"template_id","status"}],
///             "points":[{"point_type","delta"}]},
///  "findings":[{"id","kind","status","pay_no","evidence","seen_count","first_seen_at",
///               "last_seen_at"}]}  (times: ISO 8601 UTC with milliseconds)
QJsonObject encodeOrderDetail(const OrderDetail &order);

} // namespace setupcodec

} // namespace payonce::core
