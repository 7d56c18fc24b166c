#include "exitcodes.h"

namespace payonce::app {

ExitCode exitCodeFor(core::ErrorCode code)
{
    switch (code) {
    case core::ErrorCode::Misconfigured:
    case core::ErrorCode::InvalidInput: return ExitMisconfigured;
    case core::ErrorCode::Unavailable:
    case core::ErrorCode::Busy: return ExitUnavailable;
    case core::ErrorCode::SchemaTooNew: return ExitSchemaTooNew;
    default: return ExitInternal;
    }
}

} // namespace payonce::app
