#include "aesgcm.h"

#include "opensslerror_p.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>

namespace payonce::crypto {

using core::Error;
using core::ErrorCode;

namespace {

constexpr int kKeyBytes = 32;
constexpr int kTagBytes = 16;

struct CipherCtxDeleter {
    void operator()(EVP_CIPHER_CTX *c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter>;

const unsigned char *bytes(QByteArrayView v)
{
    return reinterpret_cast<const unsigned char *>(v.data());
}

core::Result<void> checkParameters(QByteArrayView key, QByteArrayView nonce)
{
    if (key.size() != kKeyBytes)
        return Error::make(ErrorCode::InvalidInput,
                           QStringLiteral("AES-256-GCM needs a 32-byte key, got %1 bytes").arg(key.size()));
    if (nonce.isEmpty())
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("AES-256-GCM needs a nonce"));
    return {};
}

// Sets cipher, IV length, key and IV on ctx for encrypt (1) or decrypt (0).
bool initialise(EVP_CIPHER_CTX *ctx, int encrypt, QByteArrayView key, QByteArrayView nonce)
{
    return EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, encrypt) == 1
           && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr) == 1
           && EVP_CipherInit_ex(ctx, nullptr, nullptr, bytes(key), bytes(nonce), encrypt) == 1;
}

} // namespace

core::Result<QByteArray> aes256GcmDecrypt(QByteArrayView key, QByteArrayView nonce, QByteArrayView associatedData,
                                          QByteArrayView ciphertextTagBase64)
{
    if (auto checked = checkParameters(key, nonce); !checked)
        return checked.error();
    auto decoded = QByteArray::fromBase64Encoding(ciphertextTagBase64.toByteArray(),
                                                  QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return Error::make(ErrorCode::BadSignature, QStringLiteral("AES-256-GCM: ciphertext is not valid base64"));
    const QByteArray &input = *decoded;
    if (input.size() < kTagBytes)
        return Error::make(ErrorCode::BadSignature, QStringLiteral("AES-256-GCM: ciphertext shorter than its tag"));
    const qsizetype cipherLength = input.size() - kTagBytes;

    ERR_clear_error();
    CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
    if (!ctx || !initialise(ctx.get(), 0, key, nonce))
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM init failed")));
    int length = 0;
    if (!associatedData.isEmpty()
        && EVP_DecryptUpdate(ctx.get(), nullptr, &length, bytes(associatedData),
                             static_cast<int>(associatedData.size()))
               != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM AAD failed")));
    QByteArray plain(cipherLength + kTagBytes, Qt::Uninitialized); // GCM is a stream mode; room to spare
    int total = 0;
    if (cipherLength > 0) {
        if (EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char *>(plain.data()), &length, bytes(input),
                              static_cast<int>(cipherLength))
            != 1)
            return Error::make(ErrorCode::Internal,
                               detail::takeOpenSslError(QStringLiteral("AES-256-GCM decrypt failed")));
        total = length;
    }
    QByteArray tag = input.right(kTagBytes);
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM set tag failed")));
    if (EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char *>(plain.data()) + total, &length) != 1) {
        ERR_clear_error();
        plain.fill('\0');
        return Error::make(
            ErrorCode::BadSignature,
            QStringLiteral(
                "AES-256-GCM: authentication failed (wrong key, nonce or associated data, or altered ciphertext)"));
    }
    total += length;
    plain.resize(total);
    return plain;
}

core::Result<QByteArray> aes256GcmEncrypt(QByteArrayView key, QByteArrayView nonce, QByteArrayView associatedData,
                                          QByteArrayView plaintext)
{
    if (auto checked = checkParameters(key, nonce); !checked)
        return checked.error();
    ERR_clear_error();
    CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
    if (!ctx || !initialise(ctx.get(), 1, key, nonce))
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM init failed")));
    int length = 0;
    if (!associatedData.isEmpty()
        && EVP_EncryptUpdate(ctx.get(), nullptr, &length, bytes(associatedData),
                             static_cast<int>(associatedData.size()))
               != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM AAD failed")));
    QByteArray out(plaintext.size() + kTagBytes, Qt::Uninitialized);
    int total = 0;
    if (!plaintext.isEmpty()) {
        if (EVP_EncryptUpdate(ctx.get(), reinterpret_cast<unsigned char *>(out.data()), &length, bytes(plaintext),
                              static_cast<int>(plaintext.size()))
            != 1)
            return Error::make(ErrorCode::Internal,
                               detail::takeOpenSslError(QStringLiteral("AES-256-GCM encrypt failed")));
        total = length;
    }
    if (EVP_EncryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char *>(out.data()) + total, &length) != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM final failed")));
    total += length;
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, out.data() + total) != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("AES-256-GCM get tag failed")));
    out.resize(total + kTagBytes);
    return out.toBase64();
}

} // namespace payonce::crypto
