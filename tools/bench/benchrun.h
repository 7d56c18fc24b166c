#pragma once

#include "benchoptions.h"
#include "benchreport.h"

namespace payonce::bench {

/// One benchmark run, phase after phase (the order matters: each uses what the previous
/// left, and the notifications must be sent within the platform's 300 s window):
///  1. orders created through the API (untimed preparation);
///  2. confirms: token + confirm with Idempotency-Key, payonce-sim as the gateway;
///  3. the WeChat notifications for the confirmed payments signed (untimed);
///  4. unique callbacks — each pays a distinct order (with --slow-stream-client, half of
///     them, then the other half with the slow client connected);
///  5. duplicate callbacks: the same notifications sent again;
///  6. GET /healthz (the bare-HTTP limit);
///  7. the callback's statements issued directly (the SQL limit), as many as step 4 paid;
///  8. Redis PING (the key-store limit), with --redis server.
/// Starting the environment failing, or an error in any phase, shows in the report.
BenchReport runBenchmark(const BenchOptions &options);

} // namespace payonce::bench
