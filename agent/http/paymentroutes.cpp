#include "paymentroutes.h"

#include "errormapping.h"
#include "jsonbody.h"

#include "core/confirm/confirmpipeline.h"
#include "core/confirm/idempotencykey.h"
#include "core/confirm/tokenissuer.h"
#include "shared/layer.h"

#include <QJsonObject>

namespace payonce::http {

namespace {

const QByteArray kRejected = QByteArrayLiteral("rejected");

HttpReply rejected(const QString &code, const QString &message)
{
    HttpReply reply = errorReply(code, message);
    reply.setLayer(kRejected);
    return reply;
}

/// X-User-Id: a positive decimal integer, else 400 invalid_user.
std::optional<qint64> userIdOf(const HttpRequest &request)
{
    bool ok = false;
    const QByteArray raw = request.header("X-User-Id").trimmed();
    for (char c : raw) {
        if (c < '0' || c > '9')
            return std::nullopt;
    }
    const qint64 id = raw.toLongLong(&ok);
    if (!ok || id <= 0)
        return std::nullopt;
    return id;
}

HttpReply replyFor(const core::PaymentOutcome &outcome)
{
    HttpReply reply;
    reply.status = httpStatus(outcome.code);
    reply.body = outcome.body;
    reply.contentType = QByteArrayLiteral("application/json");
    reply.setLayer(layerName(outcome.layer).toLatin1());
    if (outcome.replayed)
        reply.setHeader(QByteArrayLiteral("Idempotent-Replayed"), QByteArrayLiteral("true"));
    if (outcome.retryAfterSeconds)
        reply.setHeader(QByteArrayLiteral("Retry-After"), QByteArray::number(*outcome.retryAfterSeconds));
    return reply;
}

/// A required string field, already checked present by parseJsonObject.
std::optional<QString> stringField(const QJsonObject &body, const QString &name)
{
    const QJsonValue value = body.value(name);
    if (!value.isString() || value.toString().isEmpty())
        return std::nullopt;
    return value.toString();
}

} // namespace

void registerPaymentRoutes(HttpServer &server, core::TokenIssuer &tokens, core::ConfirmPipeline &confirm)
{
    RouteOptions options;
    options.rejectionLayer = kRejected;

    server.route(
        Method::Post, QStringLiteral("/api/v1/payments/token"), options, [&tokens](const HttpRequest &request) {
            const auto userId = userIdOf(request);
            if (!userId)
                return rejected(QStringLiteral("invalid_user"), QStringLiteral("X-User-Id must be a positive integer"));
            auto body = parseJsonObject(request.body, {QStringLiteral("order_no")});
            if (!body)
                return rejected(QStringLiteral("invalid_request"), body.error().publicMessage);
            const auto orderNo = stringField(body.value(), QStringLiteral("order_no"));
            if (!orderNo)
                return rejected(QStringLiteral("invalid_request"),
                                QStringLiteral("order_no must be a non-empty string"));
            return replyFor(tokens.issueToken(*userId, *orderNo));
        });

    // The confirm waits on the platform's create (seconds, with retries): the gateway lane.
    RouteOptions confirmOptions = options;
    confirmOptions.lane = Lane::Gateway;
    server.route(
        Method::Post, QStringLiteral("/api/v1/payments/confirm"), confirmOptions,
        [&confirm](const HttpRequest &request) {
            const auto userId = userIdOf(request);
            if (!userId)
                return rejected(QStringLiteral("invalid_user"), QStringLiteral("X-User-Id must be a positive integer"));
            const QString key = QString::fromLatin1(request.header("Idempotency-Key"));
            switch (core::checkIdempotencyKey(key)) {
            case core::IdempotencyKeyCheck::Missing:
                return rejected(QStringLiteral("idempotency_key_missing"),
                                QStringLiteral("the Idempotency-Key header is required"));
            case core::IdempotencyKeyCheck::Invalid:
                return rejected(QStringLiteral("invalid_idempotency_key"),
                                QStringLiteral("Idempotency-Key must be 1-255 printable ASCII characters"));
            case core::IdempotencyKeyCheck::Valid: break;
            }
            auto body = parseJsonObject(
                request.body, {QStringLiteral("token"), QStringLiteral("order_no"), QStringLiteral("channel")});
            if (!body)
                return rejected(QStringLiteral("invalid_request"), body.error().publicMessage);
            core::ConfirmRequest confirmRequest;
            confirmRequest.userId = *userId;
            confirmRequest.idempotencyKey = key;
            for (const char *field : {"token", "order_no"}) {
                const auto value = stringField(body.value(), QLatin1String(field));
                if (!value) {
                    return rejected(QStringLiteral("invalid_request"),
                                    QStringLiteral("%1 must be a non-empty string").arg(QLatin1String(field)));
                }
                (qstrcmp(field, "token") == 0 ? confirmRequest.token : confirmRequest.orderNo) = *value;
            }
            const auto channel = core::channelFromName(body.value().value(QStringLiteral("channel")).toString());
            if (!channel)
                return rejected(QStringLiteral("invalid_request"),
                                QStringLiteral("channel must be \"wechat\" or \"alipay\""));
            confirmRequest.channel = *channel;
            confirmRequest.traceParent = QString::fromLatin1(request.traceParent);
            return replyFor(confirm.confirm(confirmRequest));
        });
}

} // namespace payonce::http
