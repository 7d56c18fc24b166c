#pragma once

#include "core/common/result.h"

#include <functional>

namespace payonce::core {

/// Work a store runs inside its own write, just before COMMIT: an operator action's audit
/// row (an AuditWriter on the same thread joins the store's transaction), so the change and
/// its audit row commit together or not at all. An error from it rolls the write back and
/// is the store call's error. Empty: nothing to run.
using InTransaction = std::function<Result<void>()>;

} // namespace payonce::core
