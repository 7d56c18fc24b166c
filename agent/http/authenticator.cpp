#include "authenticator.h"

#include "logging/categories.h"

#include <QCryptographicHash>
#include <QMutexLocker>

namespace payonce::http {

bool constantTimeEquals(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    // volatile keeps the compiler from turning the loop into an early-exit memcmp.
    volatile unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

QByteArray sha256Hex(QByteArrayView data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

Authenticator::Authenticator(const QList<config::AuthToken> &tokens)
{
    for (const auto &token : tokens) {
        const auto role = roleFromName(token.role);
        if (!role) {
            qCWarning(lcHttp) << "auth token" << token.name << "has an unknown role; ignored";
            continue;
        }
        m_entries.append({token.sha256.reveal().trimmed().toLower().toLatin1(), Principal{token.name, *role}});
    }
}

QByteArray Authenticator::bearerTokenSha256(QByteArrayView authorizationHeader)
{
    static constexpr QByteArrayView kBearer("Bearer ");
    if (authorizationHeader.size() <= kBearer.size()
        || authorizationHeader.first(kBearer.size()).compare(kBearer, Qt::CaseInsensitive) != 0)
        return {};
    const QByteArrayView token = authorizationHeader.sliced(kBearer.size()).trimmed();
    if (token.isEmpty())
        return {};
    return sha256Hex(token);
}

std::optional<Principal> Authenticator::authenticate(QByteArrayView authorizationHeader) const
{
    const QByteArray hash = bearerTokenSha256(authorizationHeader);
    if (hash.isEmpty())
        return std::nullopt;
    return principalForSha256(hash);
}

std::optional<Principal> Authenticator::principalForSha256(QByteArrayView tokenSha256) const
{
    const Entry *found = nullptr;
    for (const Entry &entry : m_entries) {
        // Every entry is compared; no break, so the time does not say which one matched.
        if (constantTimeEquals(tokenSha256, entry.sha256Hex) && !found)
            found = &entry;
    }
    if (!found)
        return std::nullopt;
    return found->principal;
}

AuthFailureLimiter::AuthFailureLimiter(int maxFailures, std::chrono::milliseconds window)
    : m_maxFailures(maxFailures), m_windowMs(window.count())
{
}

qint64 AuthFailureLimiter::steadyNowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void AuthFailureLimiter::prune(QList<qint64> &times, qint64 nowMs) const
{
    while (!times.isEmpty() && times.first() <= nowMs - m_windowMs)
        times.removeFirst();
}

int AuthFailureLimiter::recordFailure(const QHostAddress &peer, qint64 nowMs)
{
    m_failures.fetch_add(1, std::memory_order_relaxed);
    QMutexLocker lock(&m_mutex);
    // Bound the table: forget addresses whose failures all left the window.
    if (m_failureTimes.size() > 10000) {
        for (auto it = m_failureTimes.begin(); it != m_failureTimes.end();) {
            prune(it.value(), nowMs);
            it = it.value().isEmpty() ? m_failureTimes.erase(it) : std::next(it);
        }
    }
    QList<qint64> &times = m_failureTimes[peer.toString()];
    prune(times, nowMs);
    times.append(nowMs);
    // Only the last maxFailures matter for the decision.
    while (times.size() > m_maxFailures)
        times.removeFirst();
    return int(times.size());
}

int AuthFailureLimiter::recordFailure(const QHostAddress &peer)
{
    return recordFailure(peer, steadyNowMs());
}

bool AuthFailureLimiter::isBlocked(const QHostAddress &peer, qint64 nowMs, int *retryAfterSeconds)
{
    QMutexLocker lock(&m_mutex);
    auto it = m_failureTimes.find(peer.toString());
    if (it == m_failureTimes.end())
        return false;
    prune(it.value(), nowMs);
    if (it.value().size() < m_maxFailures)
        return false;
    if (retryAfterSeconds) {
        const qint64 waitMs = it.value().first() + m_windowMs - nowMs;
        *retryAfterSeconds = int(std::max<qint64>(1, (waitMs + 999) / 1000));
    }
    return true;
}

bool AuthFailureLimiter::isBlocked(const QHostAddress &peer, int *retryAfterSeconds)
{
    return isBlocked(peer, steadyNowMs(), retryAfterSeconds);
}

} // namespace payonce::http
