#include "clientaddress.h"

namespace payonce::http {

namespace {

QHostAddress unmapped(const QHostAddress &address)
{
    bool isV4 = false;
    const quint32 v4 = address.toIPv4Address(&isV4);
    return isV4 && address.protocol() == QAbstractSocket::IPv6Protocol ? QHostAddress(v4) : address;
}

} // namespace

std::optional<QPair<QHostAddress, int>> TrustedProxies::parseSubnet(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty())
        return std::nullopt;
    if (!trimmed.contains(u'/')) {
        const QHostAddress host(trimmed);
        if (host.isNull())
            return std::nullopt;
        const QHostAddress address = unmapped(host);
        return QPair<QHostAddress, int>{address, address.protocol() == QAbstractSocket::IPv4Protocol ? 32 : 128};
    }
    const auto subnet = QHostAddress::parseSubnet(trimmed);
    if (subnet.first.isNull() || subnet.second < 0)
        return std::nullopt;
    return subnet;
}

std::optional<TrustedProxies> TrustedProxies::parse(const QStringList &subnets, QString *bad)
{
    QList<QPair<QHostAddress, int>> parsed;
    for (const QString &text : subnets) {
        const auto subnet = parseSubnet(text);
        if (!subnet) {
            if (bad)
                *bad = text;
            return std::nullopt;
        }
        parsed.append(*subnet);
    }
    return TrustedProxies(std::move(parsed));
}

bool TrustedProxies::isTrusted(const QHostAddress &address) const
{
    const QHostAddress a = unmapped(address);
    for (const auto &subnet : m_subnets) {
        if (a.isInSubnet(subnet))
            return true;
    }
    return false;
}

QHostAddress TrustedProxies::clientAddress(const QHostAddress &peer, const QList<QByteArray> &forwardedFor) const
{
    QHostAddress client = unmapped(peer);
    if (!isTrusted(client))
        return client;
    QList<QByteArray> hops;
    for (const QByteArray &header : forwardedFor)
        hops += header.split(',');
    for (auto it = hops.crbegin(); it != hops.crend(); ++it) {
        const QByteArray hop = it->trimmed();
        if (hop.isEmpty())
            continue;
        const QHostAddress address(QString::fromLatin1(hop));
        if (address.isNull())
            return client; // not an address: believe nothing further left
        client = unmapped(address);
        if (!isTrusted(client))
            return client;
    }
    return client;
}

} // namespace payonce::http
