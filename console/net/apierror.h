#pragma once

#include <QByteArray>
#include <QString>

namespace payonce::console {

/// What went wrong with one request to the agent, in the terms the operator needs:
/// the agent could not be reached, the token was refused (401), the token's role is too
/// low (403 forbidden, naming the role needed), the four-eyes rule blocked a decision
/// (403 four_eyes), or the agent refused the request itself (any other error status).
struct ApiError {
    /// Throttled: 429, the agent refuses this address for a while after repeated failed
    /// authentications — a consequence of a refused token, never an answer that took it.
    enum class Kind {
        None,
        Unreachable,
        Unauthenticated,
        Throttled,
        Forbidden,
        FourEyes,
        Refused
    };

    Kind kind = Kind::None;
    int httpStatus = 0; ///< 0 when no HTTP answer arrived
    QString code;       ///< the contract's error.code, e.g. "forbidden"
    QString message;    ///< the agent's sentence, or the network error's
    QString roleNeeded; ///< for Forbidden: "operator" or "approver" when the agent named it

    bool isError() const { return kind != Kind::None; }
    /// One sentence for a banner or a status line.
    QString describe() const;
};

/// Classifies an answer: the HTTP status (0 when none arrived), its body, and the
/// transport's error text when the request never got an answer.
ApiError apiErrorFrom(int httpStatus, const QByteArray &body, const QString &transportError);

} // namespace payonce::console
