#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QStringList>

#include <optional>

namespace payonce::http {

/// The proxies (nginx) whose X-Forwarded-For the agent believes, and the client address
/// a request is counted against (the failed-authentication limiter, logs).
///
/// A connection from an address outside every trusted subnet is its own client, whatever
/// X-Forwarded-For says. From a trusted proxy the header is read right to left (each proxy
/// appends the address it was connected from) and the client is the rightmost hop that is
/// not itself a trusted proxy: everything to its left was written by that client and may
/// be forged. A hop that is not an address ends the walk at the last trusted one; a header
/// of trusted hops only names its leftmost. IPv4-mapped IPv6 addresses count as IPv4.
/// Immutable; any thread.
class TrustedProxies {
public:
    TrustedProxies() = default;
    explicit TrustedProxies(QList<QPair<QHostAddress, int>> subnets) : m_subnets(std::move(subnets)) {}

    /// "10.0.0.0/8", "::1/128", or a bare address (a single host); nullopt for anything else.
    static std::optional<QPair<QHostAddress, int>> parseSubnet(const QString &text);
    /// Every entry parsed; nullopt (and *bad, if given, the first bad entry) otherwise.
    static std::optional<TrustedProxies> parse(const QStringList &subnets, QString *bad = nullptr);

    bool isEmpty() const { return m_subnets.isEmpty(); }
    bool isTrusted(const QHostAddress &address) const;

    /// The client of a request that came from peer with these X-Forwarded-For values (every
    /// such header, in arrival order).
    QHostAddress clientAddress(const QHostAddress &peer, const QList<QByteArray> &forwardedFor) const;

private:
    QList<QPair<QHostAddress, int>> m_subnets;
};

} // namespace payonce::http
