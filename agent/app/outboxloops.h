#pragma once

#include "core/outbox/outboxdispatcher.h"

#include <QString>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

class QThread;

namespace payonce::app {

/// The agent's outbox dispatcher loops: `count` threads, each running its own
/// core::OutboxDispatcher (dispatcherId "<agent>/outbox-<i>") round after round — at once
/// again after a full batch, otherwise after `idlePoll` (an event written now is delivered
/// within about idlePoll). Blocking SQL and webhook calls stay off the event loop.
///
/// stop() (drain, destructor) wakes every idle loop, lets a round in progress finish (at
/// most one batch: its deliveries stop at the lease margin) and joins the threads, so the
/// store and handlers may be destroyed afterwards. Created and stopped on one thread.
class OutboxLoops {
public:
    OutboxLoops(core::OutboxStore &store, const core::OutboxHandlerRegistry &handlers, const core::Clock &clock,
                core::OutboxDispatcherOptions options, int count, std::chrono::milliseconds idlePoll);
    ~OutboxLoops();
    OutboxLoops(const OutboxLoops &) = delete;
    OutboxLoops &operator=(const OutboxLoops &) = delete;

    void start();
    /// Idempotent.
    void stop();

private:
    void run(const QString &dispatcherId);
    /// Sleeps up to idlePoll; false when stopping.
    bool idle();

    core::OutboxStore &m_store;
    const core::OutboxHandlerRegistry &m_handlers;
    const core::Clock &m_clock;
    core::OutboxDispatcherOptions m_options;
    int m_count;
    std::chrono::milliseconds m_idlePoll;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::vector<std::unique_ptr<QThread>> m_threads;
};

} // namespace payonce::app
