#pragma once

#include "core/common/result.h"

#include <QString>

namespace payonce::config {

/// Which key store the agent uses, parsed from one of:
///   embedded                                       (the in-process store; single agent)
///   redis://[[user]:password@]host[:port][/db]     (port 6379 and db 0 by default)
/// user and password are percent-decoded; an IPv6 host is written in brackets. "rediss://"
/// (TLS) is refused: the agent's hiredis adapter speaks plain TCP on a trusted network.
///
/// The password is a secret: use redacted() for anything that is logged or shown. Parse
/// errors (ErrorCode::Misconfigured) never quote the password either.
struct RedisUrl {
    bool embedded = true;
    QString user; ///< Redis 6 ACL user; empty means the default user
    QString password;
    QString host;
    int port = 0;
    int database = 0;

    static core::Result<RedisUrl> parse(const QString &text);

    /// "embedded", or the URL with the password masked: "redis://:***@127.0.0.1:6379/0".
    QString redacted() const;

    bool operator==(const RedisUrl &) const = default;
};

} // namespace payonce::config
