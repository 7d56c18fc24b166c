#pragma once

#include "shared/layer.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>
#include <variant>

namespace payonce {

/// The messages of GET /api/v1/stream (api.md, "Streams and health"), one WebSocket text
/// frame each, and their JSON codec — the agent encodes, the console decodes.
///
/// Every message carries "type" ("snapshot", "metrics" or "event"), "seq" (per connection,
/// strictly increasing from 1) and "at" (ISO-8601 UTC with milliseconds,
/// "2026-11-29T14:53:14.123Z"). A metrics message:
///
///   {"type":"metrics","seq":2,"at":"…",
///    "duplicates":{"none":5,"idempotency_key":2,…},   per layer, since the agent started
///    "rates":{"none":1.5,…},                          per layer and second since the previous message
///    "requests":120,                                  HTTP requests answered
///    "latency_ms":{"p50":1.2,"p99":8.0},
///    "breaker_states":{"gateway.wechat":"closed",…},
///    "redis_degraded":false}
///
/// A snapshot has the same fields plus "breakers" (a list of {"name","state","mode",
/// "changed_by","reason"}) and, when known, "callbacks" (the callback mode). An event:
/// {"type":"event","seq":…,"at":…,"kind":"breaker.mode","subject":"gateway.wechat",
/// "value":"forced_open","actor":"desk","reason":"…"}.

/// The numbers of a metrics message (and of a snapshot).
struct StreamMetrics {
    QMap<Layer, qint64> duplicates;   ///< every layer of allLayers
    QMap<Layer, double> rates;        ///< per second; every layer of allLayers
    qint64 requests = 0;
    double latencyP50Ms = 0.0;
    double latencyP99Ms = 0.0;
    QMap<QString, QString> breakerStates; ///< name -> "closed" | "half_open" | "open"
    bool redisDegraded = false;

    bool operator==(const StreamMetrics &) const = default;
};

/// One breaker as a snapshot lists it.
struct StreamBreaker {
    QString name;
    QString state;
    QString mode;      ///< "auto" | "forced_open" | "forced_closed"
    QString changedBy; ///< empty unless forced
    QString reason;    ///< empty unless forced

    bool operator==(const StreamBreaker &) const = default;
};

struct StreamSnapshot {
    StreamMetrics metrics;
    QList<StreamBreaker> breakers;
    QString callbackMode; ///< "normal" | "accept_only"; empty when not known

    bool operator==(const StreamSnapshot &) const = default;
};

/// Something an operator or the agent did: kind "breaker.mode" (subject: the breaker,
/// value: the mode) or "callback.mode" (subject "callbacks", value: the mode).
/// Kind "scenario.progress": a QA scenario moved on (subject: the scenario_id, value: its
/// progress as compact JSON text {"phase",…}, actor and reason: who started it, why).
struct StreamEvent {
    QString kind;
    QString subject;
    QString value;
    QString actor;
    QString reason;

    bool operator==(const StreamEvent &) const = default;
};

struct StreamMessage {
    qint64 seq = 0;
    QDateTime at; ///< UTC, millisecond precision on the wire
    std::variant<StreamSnapshot, StreamMetrics, StreamEvent> body;

    /// "snapshot", "metrics" or "event".
    QString typeName() const;
    bool operator==(const StreamMessage &) const = default;
};

/// Compact JSON, UTF-8.
QByteArray encodeStreamMessage(const StreamMessage &message);

/// The inverse of encodeStreamMessage(). Refuses (nullopt, with a reason in *error when
/// given) anything else: not a JSON object, an unknown type, seq < 1 or not an integer, an
/// "at" that is not UTC ISO-8601 with milliseconds, a missing or mistyped field, an unknown
/// layer, a negative count.
std::optional<StreamMessage> decodeStreamMessage(const QByteArray &json, QString *error = nullptr);

/// "2026-11-29T14:53:14.123Z".
QString streamTime(const QDateTime &at);

} // namespace payonce
