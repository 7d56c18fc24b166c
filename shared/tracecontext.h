#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>

namespace payonce {

/// W3C Trace Context (the `traceparent` header, version 00): which trace a request belongs
/// to, and how to pass it on. The agent has no tracer: it only keeps the trace id of each
/// request, names itself in outgoing calls with a fresh span id, and keeps the sampled flag.
struct TraceContext {
    QString traceId;                      ///< 32 lower-case hex digits, not all zeros
    QString parentId;                     ///< 16 lower-case hex digits: the caller's span (ours when we send it)
    QString flags = QStringLiteral("01"); ///< 2 lower-case hex digits ("01": sampled)

    /// The header an incoming `traceparent` carries, when it is well-formed: version 2 hex
    /// digits other than "ff" (a later version may add fields after the flags: kept
    /// readable, as the spec asks), ids of the right length in lower-case hex, neither all
    /// zeros. Anything else — empty, upper case, wrong lengths — is nullopt: the caller
    /// starts a new trace instead; a bad header is never an error.
    static std::optional<TraceContext> parse(QByteArrayView traceparent);
    /// A new trace: fresh random trace id and span id, sampled.
    static TraceContext fresh();
    /// The same trace with a fresh span id as parent: what this process sends downstream.
    TraceContext child() const;
    /// "00-<trace id>-<parent id>-<flags>".
    QByteArray header() const;
};

/// A random id of `bytes` bytes as lower-case hex, never all zeros.
QString randomTraceHex(int bytes);

/// The traceparent to send downstream for a stored trace id (an outbox event's): the trace
/// id with a fresh span id, sampled; empty when traceId is not a valid trace id.
QByteArray traceParentFor(const QString &traceId);

} // namespace payonce
