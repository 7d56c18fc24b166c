#include "replysink.h"

#include <atomic>

namespace payonce::http {

struct ReplySink::State {
    std::function<void(HttpReply)> deliver;
    HttpReply (*fallback)() = nullptr;
    std::atomic<bool> sent{false};

    void sendOnce(HttpReply reply)
    {
        if (sent.exchange(true))
            return;
        // Moved out first: whatever the delivery captured (the responder, the in-flight
        // count) leaves with it, not with the last copy of this state.
        auto once = std::move(deliver);
        deliver = nullptr;
        once(std::move(reply));
    }

    ~State()
    {
        if (!sent.load())
            sendOnce(fallback());
    }
};

ReplySink::ReplySink(std::function<void(HttpReply)> deliver, HttpReply (*fallback)())
    : m_state(std::make_shared<State>())
{
    m_state->deliver = std::move(deliver);
    m_state->fallback = fallback;
}

void ReplySink::send(HttpReply reply) const
{
    m_state->sendOnce(std::move(reply));
}

bool ReplySink::sent() const
{
    return m_state->sent.load();
}

} // namespace payonce::http
