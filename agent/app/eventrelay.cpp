#include "eventrelay.h"

#include "stream/streamhub.h"

#include <QMutexLocker>

namespace payonce {

void EventRelay::publish(const StreamEvent &event)
{
    if (event.kind == streamevent::CallbackMode)
        noteCallbackMode(event.value);
    if (stream::StreamHub *hub = m_hub.load())
        hub->publish(event);
}

core::EventSink EventRelay::sink()
{
    return [this](const StreamEvent &event) { publish(event); };
}

void EventRelay::noteCallbackMode(const QString &mode)
{
    QMutexLocker lock(&m_mutex);
    m_callbackMode = mode;
}

QString EventRelay::callbackMode() const
{
    QMutexLocker lock(&m_mutex);
    return m_callbackMode;
}

} // namespace payonce
