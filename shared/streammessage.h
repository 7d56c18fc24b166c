#pragma once

#include "shared/layer.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>
#include <variant>

namespace payonce {

/// The messages of GET /api/v1/stream (docs/openapi.yaml, "Streams and health"), one WebSocket text
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
/// "value":"forced_open","actor":"desk","reason":"…"} with, for some kinds, "detail" (an
/// object; absent when empty).

/// The numbers of a metrics message (and of a snapshot).
struct StreamMetrics {
    QMap<Layer, qint64> duplicates; ///< every layer of allLayers
    QMap<Layer, double> rates;      ///< per second; every layer of allLayers
    qint64 requests = 0;
    double latencyP50Ms = 0.0;
    double latencyP99Ms = 0.0;
    QMap<QString, QString> breakerStates; ///< name -> "closed" | "half_open" | "open"
    bool redisDegraded = false;
    /// Outbox events waiting and given up, as the agent last read them from the database
    /// (a background read about once a second, never on the stream's tick); absent until
    /// the first read succeeds, or while the database cannot be read.
    std::optional<qint64> outboxPending = {};
    std::optional<qint64> outboxDead = {};

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

/// The kinds of event, what their fields hold, and who publishes them. `actor` is the
/// token's name where a person acted, else the agent part ("system:patrol", "system:<agent
/// id>"); `reason` is the person's reason, or the agent's explanation.
namespace streamevent {
/// subject: the breaker; value: "auto" | "forced_open" | "forced_closed" (POST /api/v1/breakers/{name}).
inline const QString BreakerMode = QStringLiteral("breaker.mode");
/// subject "callbacks"; value "normal" | "accept_only" (PUT /api/v1/mode).
inline const QString CallbackMode = QStringLiteral("callback.mode");
/// subject "compensation:<id>"; value its kind ("refund", "freeze_coupon", …); actor the
/// proposer; detail {"id","order_no","kind"}.
inline const QString CompensationProposed = QStringLiteral("compensation.proposed");
/// subject "compensation:<id>"; value "approved" | "rejected" | "executed"; actor the
/// approver; detail {"id","order_no","kind"} (+ "result" when executed). An approval
/// that executes publishes "approved", then "executed".
inline const QString CompensationDecided = QStringLiteral("compensation.decided");
/// subject: the finding's subject ("order:ORD1", …); value: its kind ("double_payment",
/// …); detail {"order_no","pay_no","evidence"}. Published once per finding: when it is
/// first raised (the patrol sees open findings again on every run).
inline const QString FindingRaised = QStringLiteral("finding.raised");
/// A QA scenario moved on: subject the scenario_id; value its progress as compact JSON
/// text {"phase",…}; actor and reason: who started it and why.
inline const QString ScenarioProgress = QStringLiteral("scenario.progress");
/// subject: the lock key; value "lost"; actor the owner; reason why (renewal refused, lease
/// ran out); detail {"fencing_token","fence_scope"}.
inline const QString LockLost = QStringLiteral("lock.lost");
/// subject: the order the stale token fenced; value the pay_no; actor "system:<agent id>";
/// detail {"pay_no","fencing_token"}: a write under an older fencing token was refused.
inline const QString FenceStaleRefused = QStringLiteral("fence.stale_refused");
/// subject "outbox:<id>"; value the event type ("order.paid", …); actor "system:<agent
/// id>" (the dispatcher that gave up); reason the last delivery error; detail {"id",
/// "event_id","event_type","aggregate_id","attempts"}: an outbox event went dead after its
/// last attempt (a re-drive that dies again publishes it again).
inline const QString OutboxDeadLetter = QStringLiteral("outbox.dead_letter");
} // namespace streamevent

/// Every kind above: what decodeStreamMessage() accepts.
const QStringList &streamEventKinds();

/// Something an operator or the agent did; the kinds are in namespace streamevent.
struct StreamEvent {
    QString kind;
    QString subject;
    QString value;
    QString actor;
    QString reason;
    QJsonObject detail = {}; ///< per kind (see streamevent); empty: not on the wire

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
/// layer, a negative count, an event kind not in streamEventKinds(), a detail that is not
/// an object.
std::optional<StreamMessage> decodeStreamMessage(const QByteArray &json, QString *error = nullptr);

/// "2026-11-29T14:53:14.123Z".
QString streamTime(const QDateTime &at);

} // namespace payonce
