#include "urlparts_p.h"

#include <QUrl>

namespace payonce::config::detail {

std::optional<qint64> parseDigits(QStringView text, int maxDigits)
{
    if (text.isEmpty() || text.size() > maxDigits)
        return std::nullopt;
    qint64 value = 0;
    for (QChar c : text) {
        if (c < u'0' || c > u'9')
            return std::nullopt;
        value = value * 10 + (c.unicode() - u'0');
    }
    return value;
}

UserInfo takeUserInfo(QStringView &rest)
{
    const qsizetype at = rest.lastIndexOf(u'@');
    if (at < 0)
        return {};
    const QStringView userInfo = rest.left(at);
    rest = rest.mid(at + 1);
    const qsizetype colon = userInfo.indexOf(u':');
    auto decode = [](QStringView part) { return QUrl::fromPercentEncoding(part.toUtf8()); };
    if (colon < 0)
        return {decode(userInfo), QString()};
    return {decode(userInfo.left(colon)), decode(userInfo.mid(colon + 1))};
}

} // namespace payonce::config::detail
