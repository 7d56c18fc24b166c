#include "core/metrics/streamevents.h"

namespace payonce::core {

StreamEvent findingRaisedEvent(const QString &kind, const QString &subject, const QString &orderNo,
                               const QString &payNo, const QJsonObject &evidence, const QString &actor)
{
    return {streamevent::FindingRaised,
            subject,
            kind,
            actor,
            QStringLiteral("%1 found for %2").arg(kind, orderNo.isEmpty() ? subject : orderNo),
            QJsonObject{{QStringLiteral("order_no"), orderNo},
                        {QStringLiteral("pay_no"), payNo},
                        {QStringLiteral("evidence"), evidence}}};
}

StreamEvent staleFenceRefusedEvent(const QString &orderNo, const QString &payNo, quint64 fencingToken,
                                   const QString &actor)
{
    return {streamevent::FenceStaleRefused,
            orderNo,
            payNo,
            actor,
            QStringLiteral("a write under a stale fencing token was refused: a newer holder wrote first"),
            QJsonObject{{QStringLiteral("pay_no"), payNo}, {QStringLiteral("fencing_token"), qint64(fencingToken)}}};
}

StreamEvent outboxDeadLetterEvent(const OutboxEvent &event, int attempts, const QString &lastError,
                                  const QString &actor)
{
    return {streamevent::OutboxDeadLetter,
            QStringLiteral("outbox:%1").arg(event.id),
            event.eventType,
            actor,
            lastError,
            QJsonObject{{QStringLiteral("id"), event.id},
                        {QStringLiteral("event_id"), event.eventId},
                        {QStringLiteral("event_type"), event.eventType},
                        {QStringLiteral("aggregate_id"), event.aggregateId},
                        {QStringLiteral("attempts"), attempts}}};
}

} // namespace payonce::core
