#pragma once

#include "core/outbox/outboxevent.h"
#include "shared/streammessage.h"

#include <QJsonObject>
#include <QString>

namespace payonce::core {

/// The stream events core publishes through an EventSink (ports/eventsink.h), built in one
/// place so every publisher fills them alike (field meanings: shared/streammessage.h).

/// finding.raised: subject and kind as stored; detail {"order_no","pay_no","evidence"}.
StreamEvent findingRaisedEvent(const QString &kind, const QString &subject, const QString &orderNo,
                               const QString &payNo, const QJsonObject &evidence, const QString &actor);

/// fence.stale_refused: a write for orderNo under fencingToken was refused because a
/// newer token had written; actor the agent ("system:<agent id>").
StreamEvent staleFenceRefusedEvent(const QString &orderNo, const QString &payNo, quint64 fencingToken,
                                   const QString &actor);

/// outbox.dead_letter: `event` went dead after `attempts` deliveries, the last failing with
/// `lastError`; actor the dispatcher's agent ("system:<agent id>").
StreamEvent outboxDeadLetterEvent(const OutboxEvent &event, int attempts, const QString &lastError,
                                  const QString &actor);

} // namespace payonce::core
