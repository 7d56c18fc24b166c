#pragma once

#include "config/config.h"
#include "core/common/result.h"

#include <QByteArray>
#include <QString>

#include <memory>

class QProcess;

namespace payonce::app {

/// sim.enabled (docs/configuration.md): starts payonce-sim as a child process on sim.listen and points
/// the agent's gateways at it. For a demo with no merchant keys configured it makes them
/// itself (an RSA-2048 merchant key in <data_dir>/sim/, ids of the platforms' sandbox
/// shape); the simulator generates its own platform key pair, whose public half the
/// agent then trusts beside any configured platform keys. wechat.apiv3_key reaches the
/// simulator (which encrypts notifications with it) through the child's environment,
/// PAYONCE_WECHAT_APIV3_KEY, never its command line. The child dies with the agent
/// (--exit-with-parent) and is stopped by the destructor.
class SimLauncher {
public:
    struct Platform {
        QString baseUrl; ///< http://<sim.listen>
        QString serial;  ///< the simulator's platform key serial (Wechatpay-Serial)
        QByteArray publicKeyPem;
    };

    /// Fills in the demo merchant settings that `config` lacks, starts the simulator and
    /// waits (bounded) until it listens. Misconfigured when payonce-sim cannot be found
    /// or refuses its configuration; Unavailable when it does not come up in time.
    static core::Result<std::unique_ptr<SimLauncher>> start(config::Config &config);
    ~SimLauncher();

    const Platform &platform() const { return m_platform; }

private:
    SimLauncher() = default;
    std::unique_ptr<QProcess> m_process;
    Platform m_platform;
};

} // namespace payonce::app
