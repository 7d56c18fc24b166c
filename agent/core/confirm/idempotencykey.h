#pragma once

#include <QStringView>

namespace payonce::core {

enum class IdempotencyKeyCheck {
    Valid,
    Missing, ///< absent or empty: 400 idempotency_key_missing
    Invalid, ///< longer than 255 or not printable ASCII: 400 invalid_idempotency_key
};

/// The Idempotency-Key header's rule (docs/openapi.yaml): 1–255 printable ASCII characters
/// (0x20–0x7E). Pure; the route calls it before the pipeline.
IdempotencyKeyCheck checkIdempotencyKey(QStringView key);

} // namespace payonce::core
