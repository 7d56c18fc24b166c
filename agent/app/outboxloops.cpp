#include "outboxloops.h"

#include "logging/categories.h"

#include <QThread>

namespace payonce::app {

OutboxLoops::OutboxLoops(core::OutboxStore &store, const core::OutboxHandlerRegistry &handlers,
                         const core::Clock &clock, core::OutboxDispatcherOptions options, int count,
                         std::chrono::milliseconds idlePoll)
    : m_store(store), m_handlers(handlers), m_clock(clock), m_options(std::move(options)), m_count(count),
      m_idlePoll(idlePoll)
{
}

OutboxLoops::~OutboxLoops()
{
    stop();
}

void OutboxLoops::start()
{
    for (int i = 0; i < m_count; ++i) {
        const QString id = QStringLiteral("%1/outbox-%2").arg(m_options.dispatcherId).arg(i);
        std::unique_ptr<QThread> thread(QThread::create([this, id] { run(id); }));
        thread->setObjectName(QStringLiteral("outbox-%1").arg(i));
        thread->start();
        m_threads.push_back(std::move(thread));
    }
}

void OutboxLoops::stop()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (const auto &thread : m_threads)
        thread->wait();
    m_threads.clear();
}

bool OutboxLoops::idle()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    return !m_wake.wait_for(lock, m_idlePoll, [this] { return m_stopping; });
}

void OutboxLoops::run(const QString &dispatcherId)
{
    core::OutboxDispatcherOptions options = m_options;
    options.dispatcherId = dispatcherId;
    core::OutboxDispatcher dispatcher(m_store, m_handlers, m_clock, options);
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            if (m_stopping)
                return;
        }
        auto round = dispatcher.runOnce();
        if (!round)
            qCWarning(lcOutbox).noquote() << dispatcherId << "round failed:" << round.error().internalMessage;
        else if (round->claimed > 0)
            qCDebug(lcOutbox).noquote() << dispatcherId << "claimed" << round->claimed << "delivered"
                                        << round->delivered << "retry" << round->retried << "dead" << round->dead;
        // A full batch means more may be due: go again at once.
        const bool full = round && round->claimed >= options.batchSize;
        if (!full && !idle())
            return;
    }
}

} // namespace payonce::app
