#pragma once

#include "httpexchange.h"

#include <QStringList>

#include <chrono>
#include <vector>

namespace payonce::bench {

/// What one phase of load did.
struct LoadResult {
    qint64 completed = 0;       ///< operations that ended Done
    qint64 failed = 0;          ///< operations that ended Failed (or lost their connection)
    bool overHttp = false;      ///< the load client's phases: requests and answers counted
    qint64 requestsSent = 0;    ///< requests whose first byte went out
    qint64 answersReceived = 0; ///< complete answers read
    qint64 idleClosesSeen = 0;  ///< idle connections found closed by the agent (reopened, not drops)
    /// Requests sent that never got their answer (the connection closed or broke first).
    qint64 dropped() const { return requestsSent - answersReceived; }
    double seconds = 0;              ///< from the first request to the last reply
    std::vector<qint64> latenciesNs; ///< one per completed operation, sorted
    QStringList failureSamples;      ///< the first few failures, as printed
};

/// Adds one worker thread's share to `total` (the caller holds the lock): its count,
/// latencies and failures, keeping the first few failure messages.
/// What one load-client thread counted.
struct LoadShare {
    std::vector<qint64> latencies;
    qint64 failed = 0;
    qint64 requestsSent = 0;
    qint64 answersReceived = 0;
    qint64 idleClosesSeen = 0;
    QStringList failures;
};
void mergeShare(LoadResult &total, const LoadShare &share);
/// The same for a phase that is not HTTP (direct SQL, Redis): no requests to count.
void mergeShare(LoadResult &total, const std::vector<qint64> &latencies, qint64 failed, const QStringList &failures);

struct LoadOptions {
    int port = 0;
    int connections = 64;
    int threads = 2;
    /// Stop starting operations after this long (those in flight finish); zero: run until
    /// the workload hands out no more.
    std::chrono::milliseconds duration{0};
};

/// A small HTTP/1.1 load generator for the benchmark: `connections` keep-alive TCP
/// connections to 127.0.0.1:port, spread over `threads` threads that each poll() their
/// own non-blocking sockets. Each connection carries one request at a time (no
/// pipelining): the next goes out when the previous reply is complete. Replies must
/// carry Content-Length (the agent always sends it). A connection the server closes
/// is reopened; an operation in flight on it fails.
LoadResult runLoad(const LoadOptions &options, Workload &workload);

} // namespace payonce::bench
