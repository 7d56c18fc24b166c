#pragma once

#include "loadclient.h"

#include <chrono>

namespace payonce::bench {

/// Raw Redis round trips: `connections` threads, each with its own hiredis connection to
/// 127.0.0.1:port, sending PING and waiting for PONG, for `duration` (or `count` PINGs in
/// all when duration is zero) — the key store's ceiling at the benchmark's concurrency.
LoadResult runRedisLimit(int port, const QString &password, int connections, std::chrono::milliseconds duration,
                         qint64 count);

} // namespace payonce::bench
