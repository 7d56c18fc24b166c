#pragma once

#include "config/config.h"

#include <QStringList>

namespace payonce::app {

/// What a SIGHUP changes in a running agent: the API tokens (auth.tokens) and the cap on
/// streams per token (stream.max_per_token) apply at once; every other setting the file
/// changed waits for a restart, and is named so the operator knows.
struct ReloadPlan {
    QStringList tokensAdded;   ///< names
    QStringList tokensRemoved; ///< names; a token whose secret or role changed is in both
    QStringList restartNeeded; ///< the changed settings that apply only at the next start
};

/// Compares the running configuration with the one just read (and validated).
ReloadPlan planReload(const config::Config &running, const config::Config &next);

} // namespace payonce::app
