#include "core/outbox/outboxhandler.h"

#include "logging/categories.h"

namespace payonce::core {

Result<void> LogHandler::deliver(const OutboxEvent &event)
{
    qCInfo(lcOutbox).noquote() << "event" << event.eventId << "type" << event.eventType << "aggregate"
                               << event.aggregateId << "payload" << event.payload;
    return {};
}

void OutboxHandlerRegistry::add(const QString &eventType, std::shared_ptr<OutboxHandler> handler)
{
    m_handlers.insert(eventType, std::move(handler));
}

void OutboxHandlerRegistry::setFallback(std::shared_ptr<OutboxHandler> handler)
{
    m_fallback = std::move(handler);
}

OutboxHandler *OutboxHandlerRegistry::handlerFor(const QString &eventType) const
{
    const auto it = m_handlers.constFind(eventType);
    if (it != m_handlers.constEnd())
        return it->get();
    return m_fallback.get();
}

} // namespace payonce::core
