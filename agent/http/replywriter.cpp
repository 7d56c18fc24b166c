#include "replywriter_p.h"

#include "errormapping.h"
#include "logging/categories.h"
#include "logging/logging.h"

namespace payonce::http {

TraceContext traceFor(const QByteArray &traceparent)
{
    return TraceContext::parse(traceparent).value_or(TraceContext::fresh());
}

void adoptTrace(HttpRequest &req, const TraceContext &trace)
{
    req.traceId = trace.traceId;
    req.traceParent = trace.child().header();
}

void writeReply(QTcpSocket *socket, HttpReply reply, const ReplyContext &context, bool fromServer)
{
    const logging::ScopedFields traced(kTraceIdField, context.traceId);
    // Counted even when the client has gone: the request was handled all the same.
    if (context.metrics)
        context.metrics->record(reply.status, context.started);
    qCDebug(lcAccess).noquote() << context.request << reply.status
                                << std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - context.started)
                                       .count()
                                << "us";
    if (!socket || socket->state() != QAbstractSocket::ConnectedState)
        return;
    if (fromServer && !context.rejectionLayer.isEmpty() && reply.layer().isEmpty())
        reply.setLayer(context.rejectionLayer);
    QByteArray out = "HTTP/1.1 " + QByteArray::number(reply.status) + ' ' + reasonPhrase(reply.status) + "\r\n";
    if (!reply.contentType.isEmpty())
        out += "Content-Type: " + reply.contentType + "\r\n";
    out += "Content-Length: " + QByteArray::number(reply.body.size()) + "\r\n";
    out += "X-Trace-Id: " + context.traceId.toLatin1() + "\r\n";
    for (const auto &h : std::as_const(reply.headers)) {
        if (h.first.compare("content-length", Qt::CaseInsensitive) == 0
            || h.first.compare("connection", Qt::CaseInsensitive) == 0)
            continue;
        out += h.first + ": " + h.second + "\r\n";
    }
    if (context.closeAfter)
        out += "Connection: close\r\n";
    out += "\r\n";
    out += reply.body;
    socket->write(out);
    if (context.closeAfter)
        socket->disconnectFromHost();
}

} // namespace payonce::http
