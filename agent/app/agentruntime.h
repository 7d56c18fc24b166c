#pragma once

#include "config/config.h"
#include "core/common/result.h"
#include "http/httpserver.h"

#include <chrono>
#include <memory>

namespace payonce::app {

/// Everything a running agent is made of, wired together: the database and its stores,
/// the key store, the gateways behind breaker(retry()), the pipelines, the HTTP server,
/// and (sim.enabled) the simulator. This is the one place that plugs adapters into the
/// core's ports. Lives on the main thread.
class AgentRuntime {
public:
    /// Connects, migrates, opens the key store, builds the gateways, starts listening.
    /// Each failure is one Error whose code says the exit code (exitcodes.h).
    static core::Result<std::unique_ptr<AgentRuntime>> start(config::Config config);
    ~AgentRuntime();

    /// SIGTERM: stop accepting, let requests in flight finish (bounded), stop timers.
    bool drain(std::chrono::milliseconds timeout);

    /// SIGHUP, with the configuration file read again and validated (never an invalid
    /// one): the tokens and the streams-per-token cap apply at once, atomically for
    /// every request from the next on; the streams of removed tokens are closed; the
    /// breakers and the callback mode re-read their operator settings from the
    /// database now. Other changed settings are logged as waiting for a restart.
    void reload(const config::Config &next);

    quint16 port() const;
    /// The routes the HTTP server registered (--list-routes).
    QList<http::RouteInfo> routes() const;

private:
    AgentRuntime();
    struct Parts;
    std::unique_ptr<Parts> d;
};

} // namespace payonce::app
