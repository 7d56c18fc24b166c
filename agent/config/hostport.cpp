#include "hostport.h"

#include "urlparts_p.h"

#include <optional>

namespace payonce::config {

namespace {

core::Error misconfigured(const QString &message)
{
    return core::Error::make(core::ErrorCode::Misconfigured, message);
}

std::optional<int> parsePort(QStringView digits)
{
    const auto value = detail::parseDigits(digits, 5);
    if (!value || *value < 1 || *value > 65535)
        return std::nullopt;
    return int(*value);
}

} // namespace

core::Result<HostPort> HostPort::parse(QStringView text, int defaultPort)
{
    if (text.isEmpty())
        return misconfigured(QStringLiteral("address is empty (expected host:port)"));

    QStringView host;
    QStringView rest; // what follows the host: empty or ":port"
    if (text.startsWith(u'[')) {
        const qsizetype close = text.indexOf(u']');
        if (close < 0)
            return misconfigured(QStringLiteral("IPv6 address is missing its closing ']'"));
        host = text.mid(1, close - 1);
        rest = text.mid(close + 1);
        if (host.isEmpty() || !host.contains(u':'))
            return misconfigured(QStringLiteral("\"[%1]\" is not an IPv6 address").arg(host));
    } else {
        const qsizetype colon = text.lastIndexOf(u':');
        if (colon >= 0 && text.left(colon).contains(u':'))
            return misconfigured(QStringLiteral("an IPv6 host must be written in brackets, e.g. [::1]:8080"));
        host = colon < 0 ? text : text.left(colon);
        rest = colon < 0 ? QStringView() : text.mid(colon);
        if (host.isEmpty())
            return misconfigured(QStringLiteral("host is missing (expected host:port)"));
    }
    for (QChar c : host) {
        if (c.isSpace() || c == u'/' || c == u'@' || c == u'?' || c == u'#')
            return misconfigured(QStringLiteral("host \"%1\" contains '%2'").arg(host).arg(c));
    }

    HostPort result;
    result.host = host.toString();
    if (rest.isEmpty()) {
        if (defaultPort <= 0)
            return misconfigured(QStringLiteral("port is missing (expected host:port)"));
        result.port = defaultPort;
        return result;
    }
    if (!rest.startsWith(u':'))
        return misconfigured(QStringLiteral("unexpected \"%1\" after the host").arg(rest));
    const auto port = parsePort(rest.mid(1));
    if (!port)
        return misconfigured(QStringLiteral("port \"%1\" is not a number in 1-65535").arg(rest.mid(1)));
    result.port = *port;
    return result;
}

QString HostPort::toString() const
{
    const QString h = host.contains(u':') ? QString(QChar(u'[') + host + QChar(u']')) : host;
    return h + QChar(u':') + QString::number(port);
}

} // namespace payonce::config
