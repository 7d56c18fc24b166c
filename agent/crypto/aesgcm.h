#pragma once

#include "core/common/result.h"

#include <QByteArray>
#include <QByteArrayView>

namespace payonce::crypto {

/// AES-256-GCM in the shape of WeChat Pay v3's notification resource
/// (algorithm "AEAD_AES_256_GCM"): a 32-byte key (the APIv3 key's ASCII bytes), the nonce
/// exactly as given (WeChat sends 12 ASCII characters), the associated data as given (may
/// be empty), and the ciphertext as base64(ciphertext || 16-byte tag). Stateless and
/// thread-safe.
///
/// Errors: a key that is not 32 bytes or an empty nonce → InvalidInput; malformed base64,
/// a too-short input, or an authentication failure (wrong key, nonce, associated data, or
/// any changed byte) → BadSignature. Nothing of a failed decryption is returned.
core::Result<QByteArray> aes256GcmDecrypt(QByteArrayView key, QByteArrayView nonce, QByteArrayView associatedData,
                                          QByteArrayView ciphertextTagBase64);

/// The inverse: base64(ciphertext || tag). Used by the simulator and the tests; the nonce
/// must be fresh per key (the caller generates it, e.g. nonceString(12)).
core::Result<QByteArray> aes256GcmEncrypt(QByteArrayView key, QByteArrayView nonce, QByteArrayView associatedData,
                                          QByteArrayView plaintext);

} // namespace payonce::crypto
