#include "notificationformat.h"

namespace payonce::platform {

bool isValidTradeNo(QStringView text)
{
    if (text.isEmpty() || text.size() > 64)
        return false;
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        const bool ok = (u >= u'A' && u <= u'Z') || (u >= u'a' && u <= u'z') || (u >= u'0' && u <= u'9') || u == u'_'
                        || u == u'-';
        if (!ok)
            return false;
    }
    return true;
}

namespace detail {

core::Error invalid(const QString &what)
{
    return core::Error::make(core::ErrorCode::InvalidInput, what);
}

core::Error badSignature(const QString &what)
{
    return core::Error::make(core::ErrorCode::BadSignature, what);
}

std::optional<QString> stringMember(const QJsonObject &o, QLatin1StringView name)
{
    const QJsonValue v = o.value(name);
    if (!v.isString())
        return std::nullopt;
    return v.toString();
}

bool isCurrencyCode(QStringView text)
{
    if (text.size() != 3)
        return false;
    for (const QChar c : text) {
        if (c.unicode() < u'A' || c.unicode() > u'Z')
            return false;
    }
    return true;
}

} // namespace detail

} // namespace payonce::platform
