#pragma once

#include "core/common/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QStringList>

namespace payonce::http {

/// Parses a request body that must be a UTF-8 JSON object holding every field in
/// requiredFields (present and not null). Failure is ErrorCode::InvalidInput whose
/// public message names the problem ("body is not valid JSON", "missing field
/// \"order_no\""), which errorReply() answers 400 invalid_request. Pure; any thread.
core::Result<QJsonObject> parseJsonObject(const QByteArray &body, const QStringList &requiredFields = {});

} // namespace payonce::http
