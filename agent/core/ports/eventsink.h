#pragma once

#include "shared/streammessage.h"

#include <functional>

namespace payonce::core {

/// Where core reports what people watch live (the stream's `event` messages, kinds in
/// shared/streammessage.h namespace streamevent): compensations proposed and decided,
/// findings raised, a stale fencing token refused. Core knows nothing of the stream: the
/// app passes a sink that hands the event to the stream hub. Called on the thread where
/// it happened, only once the fact is durable (after COMMIT); it must be cheap and never
/// block. Empty: nobody listens.
using EventSink = std::function<void(const StreamEvent &)>;

} // namespace payonce::core
