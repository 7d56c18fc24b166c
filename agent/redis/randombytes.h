#pragma once

#include "core/common/result.h"

#include <QString>

namespace payonce::redis {

/// `bytes` bytes from OpenSSL's CSPRNG (RAND_bytes), lower-case hex. Thread-safe.
/// Fails (Internal) only if the generator cannot be seeded.
core::Result<QString> randomHex(int bytes = 16);

} // namespace payonce::redis
