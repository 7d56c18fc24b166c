#pragma once

#include "config/hostport.h"
#include "core/common/result.h"

#include <QByteArray>
#include <QString>

#include <sys/time.h>

#include <chrono>
#include <memory>
#include <vector>

// hiredis's types, named but not defined here: hiredis itself stays in the .cpp files.
struct redisContext;
struct redisReply;

namespace payonce::redis {

/// The short-lived hiredis connections beside the key store's own: to the Sentinels
/// (sentinelmaster.cpp) and to a cluster's nodes asked for the slot map (clusterslots.cpp).
struct ContextFree {
    void operator()(redisContext *context) const;
};
struct ReplyFree {
    void operator()(redisReply *reply) const;
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

timeval toTimeval(std::chrono::milliseconds duration);

/// Connects within `connectTimeout`, bounds every command by `commandTimeout`, and sends
/// AUTH [user] password when a password is given. Unavailable when it cannot connect or the
/// AUTH goes unanswered; Misconfigured when the AUTH is refused (the server's words, never
/// the password).
core::Result<ContextPtr> openAuthenticated(const config::HostPort &node, std::chrono::milliseconds connectTimeout,
                                           std::chrono::milliseconds commandTimeout, const QString &user,
                                           const QString &password);

/// One command; null when the connection failed (errorOf() says why).
ReplyPtr command(redisContext *context, const std::vector<QByteArray> &args);
QString errorOf(const redisContext *context);
/// The text of a string, status or error reply.
QString replyText(const redisReply *reply);

} // namespace payonce::redis
