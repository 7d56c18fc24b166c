#include "startupsafety.h"

#include <QHostAddress>

#include <array>

namespace payonce::app {

namespace {

using core::Error;
using core::ErrorCode;

bool isLoopback(const config::HostPort &address)
{
    if (address.host.compare(QStringLiteral("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress host(address.host);
    return !host.isNull() && host.isLoopback();
}

struct ExampleToken {
    const char *token;
    const char *sha256;
};

// The SHA-256 of each token resources/payonce.example.json ships with.
constexpr std::array kExampleTokens{
    ExampleToken{"example-desk-token", "e34eae51aad85aff8de66fdfd39c1a297d1f14d5db6781e9227c023ed9c9d0b4"},
    ExampleToken{"example-lead-token", "01e388a40abc135168b7b5cd1dafddb61485ccdf98d91dd245c24f209e6c7892"},
};

} // namespace

core::Result<void> checkSafeToStart(const config::Config &config)
{
    if (config.sim.enabled && !isLoopback(config.listen))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("sim.enabled: the agent trusts the simulator's signing key, so it only runs "
                                          "with the agent on a loopback address; listen is %1")
                               .arg(config.listen.toString()));
    if (config.sim.enabled && !isLoopback(config.sim.listen))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("sim.listen: %1 is not a loopback address; whoever reaches the simulator "
                                          "can pay any order")
                               .arg(config.sim.listen.toString()));
    if (config.qa.enabled && !isLoopback(config.listen))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("qa.enabled: QA scenarios switch the duplicate defences off, so they only run "
                                          "with the agent on a loopback address; listen is %1")
                               .arg(config.listen.toString()));
    for (const config::AuthToken &token : config.authTokens) {
        const QString hash = token.sha256.reveal().trimmed().toLower();
        for (const ExampleToken &example : kExampleTokens) {
            if (hash == QLatin1String(example.sha256))
                return Error::make(ErrorCode::Misconfigured,
                                   QStringLiteral("auth.tokens: \"%1\" is the example config's token %2, which anyone "
                                                  "can read in the repository; make one of your own (openssl rand "
                                                  "-hex 32) and give its SHA-256")
                                       .arg(token.name, QLatin1String(example.token)));
        }
    }
    return {};
}

} // namespace payonce::app
