#pragma once

// What both platforms' notifications share: a size limit, the trade number format, and the
// small steps the parsers of wechatpay.cpp and alipay.cpp both take.

#include "core/common/error.h"

#include <QJsonObject>
#include <QString>
#include <QStringView>

#include <optional>

/// The pure steps of verifying a platform notification (wechatpay.h, alipay.h), one function
/// per step, so the verifier (routes, replay, worker) and the fuzz targets run exactly the
/// same code. No I/O, no state; all thread-safe. Error codes follow core::NotificationVerifier:
/// InvalidInput for a body that is not what the platform sends, BadSignature for anything
/// about authenticity.
namespace payonce::platform {

/// Bodies above this are refused (InvalidInput) before anything else is looked at: a
/// real notification is about 1 KiB (WeChat) or 2 KiB (Alipay).
inline constexpr qsizetype kMaxNotificationBodyBytes = 64 * 1024;

/// 1–64 of [A-Za-z0-9_-]: the pay_no and out_trade_no format (docs/openapi.yaml).
bool isValidTradeNo(QStringView text);

namespace detail {

core::Error invalid(const QString &what);
core::Error badSignature(const QString &what);
/// A string member, or nullopt when absent or not a string.
std::optional<QString> stringMember(const QJsonObject &o, QLatin1StringView name);
/// Three capital letters.
bool isCurrencyCode(QStringView text);

} // namespace detail

} // namespace payonce::platform
