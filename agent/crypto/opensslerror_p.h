#pragma once

// Internal to payonce_crypto: OpenSSL's error queue as one readable line.

#include <QString>

namespace payonce::crypto::detail {

/// Drains this thread's OpenSSL error queue: "<what>: <reason>[; <reason>...]", or just
/// "<what>" when the queue was empty. Never includes key material.
QString takeOpenSslError(const QString &what);

} // namespace payonce::crypto::detail
