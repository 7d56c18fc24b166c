#include "jsonbody.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QStringDecoder>

namespace payonce::http {

core::Result<QJsonObject> parseJsonObject(const QByteArray &body, const QStringList &requiredFields)
{
    using core::Error;
    using core::ErrorCode;
    // QJsonDocument replaces invalid UTF-8 silently; the contract says JSON is UTF-8, so
    // check it first.
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = decoder.decode(body);
    Q_UNUSED(text)
    if (decoder.hasError())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("body is not valid UTF-8"));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("body is not valid JSON: %1 at offset %2")
                                                        .arg(parseError.errorString())
                                                        .arg(parseError.offset));
    if (!document.isObject())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("body is not a JSON object"));
    const QJsonObject object = document.object();
    for (const QString &field : requiredFields) {
        const QJsonValue value = object.value(field);
        if (value.isUndefined() || value.isNull())
            return Error::make(ErrorCode::InvalidInput, QStringLiteral("missing field \"%1\"").arg(field));
    }
    return object;
}

} // namespace payonce::http
