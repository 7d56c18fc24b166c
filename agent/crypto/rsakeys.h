#pragma once

#include "core/common/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <memory>

namespace payonce::crypto {

namespace detail {
struct KeyHandle; // owns an EVP_PKEY; defined in rsakeys.cpp only
}

class PublicKey;

/// What a key text may be: PEM only (WeChat Pay's files), or also bare base64 of the DER
/// on one or more lines with no armour — how Alipay's console and key tool hand out the
/// Alipay public key and the app private key.
enum class KeyEncoding {
    Pem,
    PemOrBareBase64
};

/// An RSA private key (PEM: PKCS#8 "BEGIN PRIVATE KEY" or PKCS#1 "BEGIN RSA PRIVATE KEY",
/// unencrypted) that signs with SHA256withRSA (PKCS#1 v1.5) — WeChat Pay v3's and
/// Alipay RSA2's algorithm. A cheap, immutable value: copies share the key; sign() may be
/// called from any number of threads at once. A default-constructed key is null and
/// cannot sign. Loading errors are ErrorCode::Misconfigured with a message naming the
/// source ("merchant.pem: not a PEM private key ...") and never the key's contents.
class PrivateKey {
public:
    PrivateKey();
    ~PrivateKey();
    PrivateKey(const PrivateKey &);
    PrivateKey &operator=(const PrivateKey &);

    static core::Result<PrivateKey> fromPem(QByteArrayView pem,
                                            const QString &sourceName = QStringLiteral("private key"));
    /// PEM, or with PemOrBareBase64 also bare base64 of a PKCS#8 or PKCS#1 DER key.
    static core::Result<PrivateKey> fromText(QByteArrayView text, KeyEncoding accepted, const QString &sourceName);
    static core::Result<PrivateKey> fromFile(const QString &path, KeyEncoding accepted = KeyEncoding::Pem);

    bool isNull() const;
    /// Key size in bits (2048 for the platforms), 0 when null.
    int bits() const;
    /// SHA256withRSA over message, base64 (standard alphabet, padded).
    core::Result<QByteArray> signBase64(QByteArrayView message) const;
    /// SHA256withRSA over message, raw bytes.
    core::Result<QByteArray> sign(QByteArrayView message) const;
    /// The public half.
    PublicKey publicKey() const;
    /// PKCS#8 PEM of this private key (for writing a generated key to a file).
    core::Result<QByteArray> toPem() const;

private:
    explicit PrivateKey(std::shared_ptr<detail::KeyHandle> handle);
    std::shared_ptr<detail::KeyHandle> d;
    friend core::Result<PrivateKey> generateRsaKey(int bits);
};

/// An RSA public key (PEM: SubjectPublicKeyInfo "BEGIN PUBLIC KEY", PKCS#1 "BEGIN RSA
/// PUBLIC KEY", or an X.509 "BEGIN CERTIFICATE" whose key is taken) that verifies
/// SHA256withRSA signatures. Immutable, shareable, thread-safe like PrivateKey.
class PublicKey {
public:
    PublicKey();
    ~PublicKey();
    PublicKey(const PublicKey &);
    PublicKey &operator=(const PublicKey &);

    static core::Result<PublicKey> fromPem(QByteArrayView pem,
                                           const QString &sourceName = QStringLiteral("public key"));
    /// PEM, or with PemOrBareBase64 also bare base64 of a SubjectPublicKeyInfo or PKCS#1
    /// RSAPublicKey DER key.
    static core::Result<PublicKey> fromText(QByteArrayView text, KeyEncoding accepted, const QString &sourceName);
    static core::Result<PublicKey> fromFile(const QString &path, KeyEncoding accepted = KeyEncoding::Pem);

    bool isNull() const;
    /// True only when signature (raw bytes) is a valid SHA256withRSA signature of message.
    bool verify(QByteArrayView message, QByteArrayView signature) const;
    /// Same, with a base64 signature; malformed base64 is simply "does not verify".
    bool verifyBase64(QByteArrayView message, QByteArrayView signatureBase64) const;
    /// SubjectPublicKeyInfo PEM ("BEGIN PUBLIC KEY").
    core::Result<QByteArray> toPem() const;

private:
    explicit PublicKey(std::shared_ptr<detail::KeyHandle> handle);
    std::shared_ptr<detail::KeyHandle> d;
    friend class PrivateKey;
};

/// A fresh RSA key pair (e = 65537) from OpenSSL's CSPRNG. bits >= 2048.
core::Result<PrivateKey> generateRsaKey(int bits = 2048);

} // namespace payonce::crypto
