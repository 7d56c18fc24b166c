#pragma once

#include "core/common/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace payonce::crypto {

/// Secure randomness and comparison, from OpenSSL's CSPRNG (RAND_bytes) and CRYPTO_memcmp.
/// All functions are thread-safe. The random ones fail (ErrorCode::Internal) only when the
/// generator cannot be seeded — callers must not fall back to a weaker source.

/// `count` random bytes (count >= 0).
core::Result<QByteArray> randomBytes(int count);
/// `bytes` random bytes as lower-case hex (2 * bytes characters).
core::Result<QString> randomHex(int bytes = 16);
/// A nonce string of `length` characters from [0-9A-Z] — the shape WeChat Pay uses for
/// nonce_str (32 by default). Uniform: bytes are drawn with rejection sampling.
core::Result<QString> nonceString(int length = 32);

/// Equal contents, in time that depends only on the lengths (never on where they differ).
/// For comparing MACs, tokens and hashes supplied by a caller.
bool constantTimeEquals(QByteArrayView a, QByteArrayView b);

} // namespace payonce::crypto
