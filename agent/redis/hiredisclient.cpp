#include "hiredisclient.h"

#include <hiredis/hiredis.h>

namespace payonce::redis {

using core::Error;
using core::ErrorCode;
using std::chrono::milliseconds;

void ContextFree::operator()(redisContext *context) const
{
    redisFree(context);
}

void ReplyFree::operator()(redisReply *reply) const
{
    freeReplyObject(reply);
}

timeval toTimeval(milliseconds duration)
{
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
    return tv;
}

core::Result<ContextPtr> openAuthenticated(const config::HostPort &node, milliseconds connectTimeout,
                                           milliseconds commandTimeout, const QString &user, const QString &password)
{
    ContextPtr context(redisConnectWithTimeout(node.host.toUtf8().constData(), node.port, toTimeval(connectTimeout)));
    if (!context || context->err)
        return Error::make(ErrorCode::Unavailable, QStringLiteral("cannot connect: %1").arg(errorOf(context.get())));
    redisSetTimeout(context.get(), toTimeval(commandTimeout));
    if (!password.isEmpty()) {
        std::vector<QByteArray> auth{QByteArrayLiteral("AUTH")};
        if (!user.isEmpty())
            auth.push_back(user.toUtf8());
        auth.push_back(password.toUtf8());
        ReplyPtr reply = command(context.get(), auth);
        if (!reply)
            return Error::make(ErrorCode::Unavailable, QStringLiteral("AUTH: %1").arg(errorOf(context.get())));
        if (reply->type == REDIS_REPLY_ERROR)
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("AUTH refused: %1").arg(replyText(reply.get())));
    }
    return context;
}

ReplyPtr command(redisContext *context, const std::vector<QByteArray> &args)
{
    std::vector<const char *> argv;
    std::vector<size_t> lengths;
    argv.reserve(args.size());
    lengths.reserve(args.size());
    for (const QByteArray &arg : args) {
        argv.push_back(arg.constData());
        lengths.push_back(static_cast<size_t>(arg.size()));
    }
    return ReplyPtr(static_cast<redisReply *>(
        redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
}

QString errorOf(const redisContext *context)
{
    return context ? QString::fromLocal8Bit(context->errstr) : QStringLiteral("out of memory");
}

QString replyText(const redisReply *reply)
{
    return QString::fromUtf8(reply->str, static_cast<qsizetype>(reply->len));
}

} // namespace payonce::redis
