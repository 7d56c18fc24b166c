#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

enum class OutboxStatus {
    Pending,
    Delivered,
    Dead
};

/// The wire and column name ("pending", "delivered", "dead").
QString outboxStatusName(OutboxStatus status);
std::optional<OutboxStatus> outboxStatusFromName(const QString &name);

/// One row of the outbox (sql/<dialect>/001_initial.sql): an event written in the business
/// transaction, delivered at least once by a dispatcher. eventId is deterministic
/// ("order.paid:ORD001") and is what handlers deduplicate on.
struct OutboxEvent {
    qint64 id = 0;
    QString eventId;
    QString eventType;
    QString aggregateId;
    QString payload; ///< JSON text
    OutboxStatus status = OutboxStatus::Pending;
    int attempts = 0; ///< deliveries tried so far (the successful one included)
    qint64 nextAttemptAtMs = 0;
    QString claimedBy;
    std::optional<qint64> claimedUntilMs;
    QString lastError;
    bool redriven = false;
    QString traceId;
    qint64 createdAtMs = 0;
    std::optional<qint64> deliveredAtMs;
};

/// What a dispatcher reports for one claimed event.
struct OutboxOutcome {
    enum class Kind {
        Delivered, ///< the handler said done
        Retry,     ///< failed; pending again at nextAttemptAtMs
        Dead,      ///< failed for the last allowed time
        Released,  ///< not tried (the lease was running out); claimable again at once
    };
    qint64 id = 0;
    Kind kind = Kind::Released;
    int attempts = 0;           ///< the row's attempts after this one (unused for Released)
    qint64 nextAttemptAtMs = 0; ///< Retry only
    QString error;              ///< Retry and Dead: the handler's error, kept as last_error
};

} // namespace payonce::core
