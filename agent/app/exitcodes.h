#pragma once

#include "core/common/error.h"

namespace payonce::app {

/// The agent's exit codes, so that systemd units and scripts can tell a typo from an
/// outage. Listed in --help and the README.
enum ExitCode : int {
    ExitOk = 0,
    ExitInternal = 1,      ///< a bug or an unclassified failure
    ExitMisconfigured = 2, ///< bad flag, file, URL, credentials or missing driver: fix the config
    ExitUnavailable = 3,   ///< the database could not be reached in time: retrying later may work
    ExitSchemaTooNew = 4,  ///< the database was migrated by a newer payonce
};

ExitCode exitCodeFor(core::ErrorCode code);

} // namespace payonce::app
