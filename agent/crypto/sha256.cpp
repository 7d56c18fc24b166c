#include "sha256.h"

#include <openssl/evp.h>

#include <QtGlobal>

namespace payonce::crypto {

struct Sha256::Private {
    EVP_MD_CTX *context = nullptr;
};

Sha256::Sha256() : d(std::make_unique<Private>())
{
    d->context = EVP_MD_CTX_new();
    // Only out of memory makes these fail; a digest we cannot compute is not one to skip.
    if (!d->context || EVP_DigestInit_ex(d->context, EVP_sha256(), nullptr) != 1)
        qFatal("SHA-256: OpenSSL cannot initialise a digest");
}

Sha256::~Sha256()
{
    EVP_MD_CTX_free(d->context);
}

void Sha256::add(QByteArrayView part)
{
    if (!part.isEmpty() && EVP_DigestUpdate(d->context, part.data(), size_t(part.size())) != 1)
        qFatal("SHA-256: OpenSSL refused an update");
}

QByteArray Sha256::result()
{
    QByteArray digest(32, '\0');
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(d->context, reinterpret_cast<unsigned char *>(digest.data()), &length) != 1 || length != 32)
        qFatal("SHA-256: OpenSSL refused the final step");
    return digest;
}

} // namespace payonce::crypto
