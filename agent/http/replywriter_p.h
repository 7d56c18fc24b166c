#pragma once

// Writing a reply on the connection, and the trace every request's log lines carry.

#include "endpointmetrics_p.h"
#include "httptypes.h"

#include "shared/tracecontext.h"

#include <QLatin1StringView>
#include <QTcpSocket>

#include <chrono>
#include <memory>

namespace payonce::http {

/// The field every log line written for a request carries (JSON lines: "trace_id").
inline constexpr QLatin1StringView kTraceIdField("trace_id");

/// W3C Trace Context: a well-formed traceparent continues its trace; anything else — absent
/// or malformed — starts a new one, never an error.
TraceContext traceFor(const QByteArray &traceparent);
void adoptTrace(HttpRequest &req, const TraceContext &trace);

struct ReplyContext {
    QString traceId;
    QString request; ///< "POST /api/v1/payments/confirm", for the access line
    QByteArray rejectionLayer;
    bool closeAfter = false;
    std::shared_ptr<const EndpointMetrics> metrics;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

/// Counts the reply in its endpoint's metrics and, while the socket is connected, writes it
/// (with Content-Length, X-Trace-Id, the rejection layer of a refusal fromServer, and
/// Connection: close then a close when asked).
void writeReply(QTcpSocket *socket, HttpReply reply, const ReplyContext &context, bool fromServer);

} // namespace payonce::http
