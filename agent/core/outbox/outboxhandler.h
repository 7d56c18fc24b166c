#pragma once

#include "core/common/result.h"
#include "core/outbox/outboxevent.h"

#include <QHash>
#include <QString>

#include <memory>

namespace payonce::core {

/// Delivers one outbox event somewhere (a webhook, a log, a queue). Delivery is
/// at-least-once: the same event may come again after a crash, a lost report or an expired
/// claim, so a handler and whatever it talks to must be idempotent by event.eventId.
/// Called on a dispatcher's thread, outside any transaction; must be thread-safe when one
/// handler serves several dispatchers. A failure is retried later with backoff; its
/// internalMessage becomes the row's last_error.
class OutboxHandler {
public:
    virtual ~OutboxHandler() = default;
    virtual Result<void> deliver(const OutboxEvent &event) = 0;
};

/// Writes the event to the log (category payonce.agent.outbox) and succeeds.
class LogHandler final : public OutboxHandler {
public:
    Result<void> deliver(const OutboxEvent &event) override;
};

/// Handlers by event type. Filled before dispatchers start, read-only afterwards
/// (thread-safe for reading). A fallback, if set, takes the types nobody registered.
class OutboxHandlerRegistry {
public:
    void add(const QString &eventType, std::shared_ptr<OutboxHandler> handler);
    void setFallback(std::shared_ptr<OutboxHandler> handler);
    OutboxHandler *handlerFor(const QString &eventType) const;

private:
    QHash<QString, std::shared_ptr<OutboxHandler>> m_handlers;
    std::shared_ptr<OutboxHandler> m_fallback;
};

} // namespace payonce::core
