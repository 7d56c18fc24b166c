#include "apierror.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace payonce::console {

QString ApiError::describe() const
{
    switch (kind) {
    case Kind::None: return {};
    case Kind::Unreachable: return QCoreApplication::translate("ApiError", "The agent is unreachable: %1").arg(message);
    case Kind::Unauthenticated:
        return QCoreApplication::translate(
            "ApiError", "The agent refused the token (401 unauthenticated). Connect again with a valid token.");
    case Kind::Throttled:
        return QCoreApplication::translate(
                   "ApiError", "The agent refuses this address for now (429): %1. Connect again with a valid token "
                               "once the wait is over.")
            .arg(message);
    case Kind::Forbidden:
        if (!roleNeeded.isEmpty())
            return QCoreApplication::translate("ApiError",
                                               "Your token's role is too low (403 forbidden): this needs the role %1.")
                .arg(roleNeeded);
        return QCoreApplication::translate("ApiError", "Your token's role is too low (403 forbidden): %1").arg(message);
    case Kind::FourEyes:
        return QCoreApplication::translate("ApiError",
                                           "Four-eyes rule: whoever proposed a compensation cannot decide it. "
                                           "Another approver must approve or reject it.");
    case Kind::Refused:
        return QCoreApplication::translate("ApiError", "The agent refused (%1 %2): %3")
            .arg(httpStatus)
            .arg(code, message);
    }
    return message;
}

ApiError apiErrorFrom(int httpStatus, const QByteArray &body, const QString &transportError)
{
    ApiError error;
    error.httpStatus = httpStatus;
    if (httpStatus == 0) {
        error.kind = ApiError::Kind::Unreachable;
        error.message = transportError.isEmpty() ? QStringLiteral("no answer") : transportError;
        return error;
    }
    if (httpStatus >= 200 && httpStatus < 300)
        return error;
    const QJsonObject details = QJsonDocument::fromJson(body).object().value(QStringLiteral("error")).toObject();
    error.code = details.value(QStringLiteral("code")).toString();
    error.message = details.value(QStringLiteral("message")).toString();
    if (error.message.isEmpty())
        error.message = QString::fromUtf8(body.left(200));
    if (httpStatus == 401) {
        error.kind = ApiError::Kind::Unauthenticated;
    } else if (httpStatus == 429) {
        error.kind = ApiError::Kind::Throttled;
    } else if (httpStatus == 403 && error.code == u"four_eyes") {
        error.kind = ApiError::Kind::FourEyes;
    } else if (httpStatus == 403) {
        error.kind = ApiError::Kind::Forbidden;
        // The agent names the role in its sentence: "this needs the role operator; …".
        static const QRegularExpression rolePattern(QStringLiteral("needs the role ([a-z]+)"));
        const auto match = rolePattern.match(error.message);
        if (match.hasMatch())
            error.roleNeeded = match.captured(1);
    } else {
        error.kind = ApiError::Kind::Refused;
    }
    return error;
}

} // namespace payonce::console
