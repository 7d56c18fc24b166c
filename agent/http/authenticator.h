#pragma once

#include "httptypes.h"

#include "config/config.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>

#include <atomic>
#include <chrono>
#include <optional>

namespace payonce::http {

/// True when a and b hold the same bytes. For equal lengths the time taken depends only on
/// the length, never on where the first difference is; different lengths answer false at
/// once (lengths are not secret here: every compared value is a 64-digit hex SHA-256).
bool constantTimeEquals(QByteArrayView a, QByteArrayView b);

/// Lower-case hex SHA-256 of data.
QByteArray sha256Hex(QByteArrayView data);

/// Checks `Authorization: Bearer <token>` against the configured tokens (config.auth.tokens):
/// the token's SHA-256 hex is compared in constant time with every configured hash, with
/// no early exit, so timing tells nothing about which hash came close. Tokens with an
/// unknown role are ignored (config validation refuses them earlier). Immutable after
/// construction; any thread.
class Authenticator {
public:
    Authenticator() = default;
    explicit Authenticator(const QList<config::AuthToken> &tokens);

    /// The principal for an Authorization header value, or nullopt (missing, not Bearer,
    /// unknown token).
    std::optional<Principal> authenticate(QByteArrayView authorizationHeader) const;
    /// The principal whose token has this SHA-256 (lower-case hex), or nullopt: whether a
    /// stream opened with that token may go on after the tokens were replaced.
    std::optional<Principal> principalForSha256(QByteArrayView tokenSha256) const;
    /// The SHA-256 (hex) of the token in `Authorization: Bearer <token>`; empty when the
    /// header names none.
    static QByteArray bearerTokenSha256(QByteArrayView authorizationHeader);

    qsizetype tokenCount() const { return m_entries.size(); }

private:
    struct Entry {
        QByteArray sha256Hex;
        Principal principal;
    };
    QList<Entry> m_entries;
};

/// Counts failed authentications (a token that names no configured token) per client
/// address and slows an address that failed maxFailures times within window: isBlocked()
/// then says so, with the seconds until its oldest failure leaves the window (the
/// Retry-After value). The server asks it only after a token failed: a valid token is
/// never refused, so one client's guessing cannot lock the desk out (behind nginx every
/// client would otherwise share its address). Thread-safe; the clock is steady time in
/// ms, passed in so tests can drive it.
class AuthFailureLimiter {
public:
    AuthFailureLimiter(int maxFailures = 10, std::chrono::milliseconds window = std::chrono::minutes(1));

    /// Records a failure; returns the number of failures of that address inside the window.
    int recordFailure(const QHostAddress &peer, qint64 nowMs);
    int recordFailure(const QHostAddress &peer);
    /// Whether peer is refused now; *retryAfterSeconds (if given) gets the wait (>= 1).
    bool isBlocked(const QHostAddress &peer, qint64 nowMs, int *retryAfterSeconds = nullptr);
    bool isBlocked(const QHostAddress &peer, int *retryAfterSeconds = nullptr);
    /// Counts a request refused with 429.
    void recordRefusal() { m_refused.fetch_add(1, std::memory_order_relaxed); }

    quint64 failuresTotal() const { return m_failures.load(std::memory_order_relaxed); }
    quint64 refusedTotal() const { return m_refused.load(std::memory_order_relaxed); }

    static qint64 steadyNowMs();

private:
    void prune(QList<qint64> &times, qint64 nowMs) const;

    const int m_maxFailures;
    const qint64 m_windowMs;
    QMutex m_mutex;
    QHash<QString, QList<qint64>> m_failureTimes; // by peer address, oldest first
    std::atomic<quint64> m_failures{0};
    std::atomic<quint64> m_refused{0};
};

} // namespace payonce::http
