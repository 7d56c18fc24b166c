#include "core/common/error.h"

namespace payonce::core {

QString errorCodeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::InvalidInput: return QStringLiteral("invalid_input");
    case ErrorCode::NotFound: return QStringLiteral("not_found");
    case ErrorCode::Duplicate: return QStringLiteral("duplicate");
    case ErrorCode::Conflict: return QStringLiteral("conflict");
    case ErrorCode::StaleFence: return QStringLiteral("stale_fence");
    case ErrorCode::Busy: return QStringLiteral("busy");
    case ErrorCode::Unavailable: return QStringLiteral("unavailable");
    case ErrorCode::Unauthenticated: return QStringLiteral("unauthenticated");
    case ErrorCode::Forbidden: return QStringLiteral("forbidden");
    case ErrorCode::FourEyes: return QStringLiteral("four_eyes");
    case ErrorCode::BadSignature: return QStringLiteral("bad_signature");
    case ErrorCode::Misconfigured: return QStringLiteral("misconfigured");
    case ErrorCode::SchemaTooNew: return QStringLiteral("schema_too_new");
    case ErrorCode::Internal: return QStringLiteral("internal");
    }
    Q_UNREACHABLE();
}

} // namespace payonce::core
