#include "routetable_p.h"

#include "errormapping.h"
#include "logging/categories.h"

#include <QUrl>

#include <exception>

namespace payonce::http {

QList<Segment> parsePattern(const QString &pattern)
{
    QList<Segment> segments;
    const QStringList parts = pattern.split(u'/', Qt::SkipEmptyParts);
    for (const QString &part : parts) {
        if (part.size() > 2 && part.startsWith(u'<') && part.endsWith(u'>'))
            segments.append({part.mid(1, part.size() - 2), true});
        else
            segments.append({part, false});
    }
    return segments;
}

std::optional<Method> toMethod(QHttpServerRequest::Method method)
{
    using M = QHttpServerRequest::Method;
    switch (method) {
    case M::Get: return Method::Get;
    case M::Post: return Method::Post;
    case M::Put: return Method::Put;
    case M::Patch: return Method::Patch;
    case M::Delete: return Method::Delete;
    case M::Head: return Method::Head;
    case M::Options: return Method::Options;
    default: return std::nullopt;
    }
}

RouteMatch matchRoute(const QList<Route> &routes, std::optional<Method> method, const QString &encodedPath)
{
    // Each segment decoded once.
    QStringList parts = encodedPath.split(u'/', Qt::SkipEmptyParts);
    for (QString &part : parts)
        part = QUrl::fromPercentEncoding(part.toUtf8());
    const Route *matched = nullptr;
    int matchedLiterals = -1;
    QHash<QString, QString> arguments;
    QStringList allowed;
    for (const Route &r : routes) {
        if (r.segments.size() != parts.size())
            continue;
        QHash<QString, QString> args;
        int literals = 0;
        bool ok = true;
        for (qsizetype i = 0; i < parts.size() && ok; ++i) {
            const QString &decoded = parts.at(i);
            if (r.segments.at(i).placeholder) {
                ok = !decoded.isEmpty();
                args.insert(r.segments.at(i).text, decoded);
            } else {
                ok = decoded == r.segments.at(i).text;
                ++literals;
            }
        }
        if (!ok)
            continue;
        if (!method || r.method != *method) {
            if (!allowed.contains(methodName(r.method)))
                allowed << methodName(r.method);
            continue;
        }
        if (literals > matchedLiterals) {
            matched = &r;
            matchedLiterals = literals;
            arguments = args;
        }
    }

    return RouteMatch{matched, arguments, allowed};
}

namespace {

/// Runs `run`; what it throws is logged with the request's path and trace, and false
/// returned: nothing a handler throws leaves the server.
template <typename Run>
bool ranWithoutThrowing(const char *what, const HttpRequest &request, Run &&run)
{
    try {
        run();
        return true;
    } catch (const std::exception &e) {
        qCCritical(lcHttp).noquote() << what << "for" << request.path << "threw:" << e.what() << "trace"
                                     << request.traceId;
    } catch (...) {
        qCCritical(lcHttp).noquote() << what << "for" << request.path << "threw"
                                     << "trace" << request.traceId;
    }
    return false;
}

HttpReply internalError()
{
    return errorReply(QStringLiteral("internal"), QStringLiteral("internal error"));
}

} // namespace

HttpReply invokeSafely(const Handler &handler, const HttpRequest &request)
{
    std::optional<HttpReply> reply;
    if (ranWithoutThrowing("handler", request, [&] { reply = handler(request); }))
        return std::move(*reply);
    return internalError();
}

void invokeSafely(const Route &route, const HttpRequest &request, const ReplySink &sink)
{
    if (route.handler) {
        sink.send(invokeSafely(route.handler, request));
        return;
    }
    if (!ranWithoutThrowing("handler", request, [&] { route.deferred(request, sink); }))
        sink.send(internalError()); // unless it sent already
}

bool tryFromMemorySafely(const Route &route, const HttpRequest &request, const ReplySink &sink)
{
    bool taken = false;
    if (ranWithoutThrowing("memory-first handler", request, [&] { taken = route.fromMemory(request, sink); }))
        return taken;
    sink.send(internalError()); // unless it sent already
    return true;
}

} // namespace payonce::http
