#pragma once

#include "httptypes.h"

#include <functional>
#include <memory>

namespace payonce::http {

/// Where a deferred handler sends its reply: from any thread, later than the handler's
/// return (a callback whose delivery row rides a group commit answers once it has
/// committed, and its worker thread meanwhile takes the next request). Copies share one
/// reply: the first send() goes out, later ones are ignored. A request accepted is always
/// answered: when the last copy goes without a send() — a handler that lost its sink — the
/// fallback reply goes instead.
class ReplySink {
public:
    /// `deliver` writes the reply (it is called once, on the sending thread, and must only
    /// post to the socket's thread); `fallback` makes the reply sent if nothing else is
    /// (made only then: most requests never need it).
    ReplySink(std::function<void(HttpReply)> deliver, HttpReply (*fallback)());

    void send(HttpReply reply) const;
    bool sent() const;

private:
    struct State;
    std::shared_ptr<State> m_state;
};

/// A route's work when its reply may come later: runs on the route's lane like a Handler,
/// and sends its reply through the sink — before it returns or afterwards, from any thread.
/// Exceptions the handler throws before sending are answered 500.
using DeferredHandler = std::function<void(const HttpRequest &, const ReplySink &)>;

/// A deferred route's first try, on the event loop's thread before the request takes a
/// place on its lane: for the requests that memory alone answers. Returns true when it took
/// the request (it sends through the sink, now or later, from any thread); false, having
/// sent nothing, passes the request on to the lane's handler. It must never block — no
/// storage, no network — or every connection of the server waits with it. Exceptions it
/// throws are answered 500.
using MemoryFirstHandler = std::function<bool(const HttpRequest &, const ReplySink &)>;

} // namespace payonce::http
