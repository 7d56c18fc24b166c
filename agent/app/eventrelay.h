#pragma once

#include "core/ports/eventsink.h"

#include <QMutex>
#include <QString>

#include <atomic>

namespace payonce::stream {
class StreamHub;
}

namespace payonce {

/// The agent's one EventSink: what core, the key store's watchdog and the routes publish
/// goes to the live stream once it runs; events before attach() or after detach() have
/// nobody to reach and are dropped. It also remembers the callback mode last seen — from
/// a callback.mode event, the worker's periodic read, or the read at start — so a
/// snapshot can carry it without a database read on the stream's thread.
/// Thread-safe: publish from any thread; attach/detach on the hub's thread.
class EventRelay {
public:
    void attach(stream::StreamHub *hub) { m_hub.store(hub); }
    void detach() { m_hub.store(nullptr); }

    void publish(const StreamEvent &event);
    /// A sink bound to this relay (which must outlive every copy).
    core::EventSink sink();

    /// "normal" | "accept_only" as last seen; empty before anything was seen.
    void noteCallbackMode(const QString &mode);
    QString callbackMode() const;

private:
    std::atomic<stream::StreamHub *> m_hub{nullptr};
    mutable QMutex m_mutex;
    QString m_callbackMode;
};

} // namespace payonce
