#pragma once

#include <QString>

namespace payonce::core {

/// Protocol-agnostic error codes. The HTTP layer maps them to statuses in one place;
/// nothing below it knows a status number.
enum class ErrorCode {
    InvalidInput, ///< the caller sent something malformed; nothing was written
    NotFound,
    Duplicate,   ///< the durable store already has this key (a unique violation)
    Conflict,    ///< a CAS lost: somebody else made the transition
    StaleFence,  ///< a write carried a fencing token older than the order's
    Busy,        ///< contention (lock held, SQLITE_BUSY, deadlock) — retrying is safe
    Unavailable, ///< a dependency is down or timed out — retrying later is safe
    Unauthenticated,
    Forbidden,
    FourEyes, ///< an approver decided on their own proposal (compensations)
    BadSignature,
    Misconfigured, ///< configuration is wrong; the process cannot serve
    SchemaTooNew,  ///< the database was migrated by a newer payonce
    Internal,      ///< a bug or an unclassified failure
};

/// The wire name of an error code, snake_case ("stale_fence").
QString errorCodeName(ErrorCode code);

/// An error as it travels through core and adapters. internalMessage may hold details
/// for the log (never secrets); publicMessage is what a client may see.
struct Error {
    ErrorCode code = ErrorCode::Internal;
    QString internalMessage;
    QString publicMessage;
    /// A code of the contract (docs/openapi.yaml ErrorCode) more precise than `code`'s own
    /// ("refund_exceeds_payment" rather than "conflict"); empty: `code`'s. The HTTP layer
    /// answers it with its own status.
    QString contractCode;

    static Error make(ErrorCode code, QString internal, QString publicText = {})
    {
        if (publicText.isEmpty())
            publicText = internal;
        Error error;
        error.code = code;
        error.internalMessage = std::move(internal);
        error.publicMessage = std::move(publicText);
        return error;
    }

    /// The same error answered under a contract code of its own (see contractCode).
    Error withContractCode(QString apiCode) const
    {
        Error out = *this;
        out.contractCode = std::move(apiCode);
        return out;
    }

    /// Retrying the same operation later may succeed.
    bool isTransient() const { return code == ErrorCode::Busy || code == ErrorCode::Unavailable; }
};

} // namespace payonce::core
