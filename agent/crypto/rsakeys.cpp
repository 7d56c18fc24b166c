#include "rsakeys.h"

#include "opensslerror_p.h"

#include <QFile>

#include <openssl/bio.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace payonce::crypto {

using core::Error;
using core::ErrorCode;

namespace detail {
struct KeyHandle {
    explicit KeyHandle(EVP_PKEY *k) : key(k) {}
    ~KeyHandle() { EVP_PKEY_free(key); }
    KeyHandle(const KeyHandle &) = delete;
    KeyHandle &operator=(const KeyHandle &) = delete;
    EVP_PKEY *key;
};
} // namespace detail

namespace {

struct BioDeleter {
    void operator()(BIO *b) const { BIO_free(b); }
};
struct MdCtxDeleter {
    void operator()(EVP_MD_CTX *c) const { EVP_MD_CTX_free(c); }
};
struct X509Deleter {
    void operator()(X509 *x) const { X509_free(x); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

BioPtr memoryBio(QByteArrayView data)
{
    return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

core::Result<QByteArray> readKeyFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("cannot read key file %1: %2").arg(path, file.errorString()));
    return file.readAll();
}

core::Result<QByteArray> bioContents(BIO *bio)
{
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    if (size <= 0 || data == nullptr)
        return Error::make(ErrorCode::Internal, QStringLiteral("PEM encoding produced nothing"));
    return QByteArray(data, static_cast<qsizetype>(size));
}

bool isRsa(EVP_PKEY *key)
{
    return EVP_PKEY_is_a(key, "RSA") == 1;
}

/// Bare base64 (no "-----BEGIN" line) under each PEM label that may hold it, so the PEM
/// readers (and their checks) decide; empty when the text is not base64 at all.
QList<QByteArray> armouredAs(QByteArrayView text, std::initializer_list<const char *> labels)
{
    QByteArray compact;
    for (const char c : text) {
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            compact.append(c);
    }
    const auto decoded = QByteArray::fromBase64Encoding(compact, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.isEmpty())
        return {};
    const QByteArray base64 = decoded.decoded.toBase64();
    QByteArray lines;
    for (qsizetype i = 0; i < base64.size(); i += 64)
        lines.append(base64.mid(i, 64)).append('\n');
    QList<QByteArray> pems;
    for (const char *label : labels)
        pems.append(QByteArray("-----BEGIN ") + label + "-----\n" + lines + "-----END " + label + "-----\n");
    return pems;
}

template <typename Key>
core::Result<Key> fromBareBase64(QByteArrayView text, std::initializer_list<const char *> labels,
                                 const QString &sourceName, const QString &what)
{
    const QList<QByteArray> pems = armouredAs(text, labels);
    if (pems.isEmpty())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("%1: neither a PEM %2 nor bare base64 of one").arg(sourceName, what));
    core::Result<Key> key = Error::make(ErrorCode::Misconfigured, QString());
    for (const QByteArray &pem : pems) {
        key = Key::fromPem(pem, sourceName + QStringLiteral(" (bare base64)"));
        if (key)
            break;
    }
    return key;
}

} // namespace

// ---- PrivateKey -------------------------------------------------------------------

PrivateKey::PrivateKey() = default;
PrivateKey::~PrivateKey() = default;
PrivateKey::PrivateKey(const PrivateKey &) = default;
PrivateKey &PrivateKey::operator=(const PrivateKey &) = default;
PrivateKey::PrivateKey(std::shared_ptr<detail::KeyHandle> handle) : d(std::move(handle))
{
}

core::Result<PrivateKey> PrivateKey::fromPem(QByteArrayView pem, const QString &sourceName)
{
    ERR_clear_error();
    if (!pem.contains(QByteArrayView("-----BEGIN")))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("%1: not a PEM private key (no \"-----BEGIN\" line)").arg(sourceName));
    if (pem.contains(QByteArrayView("ENCRYPTED")))
        return Error::make(
            ErrorCode::Misconfigured,
            QStringLiteral("%1: the private key is encrypted; payonce needs an unencrypted PEM key").arg(sourceName));
    BioPtr bio = memoryBio(pem);
    // A null passphrase callback with an empty user string: never prompts on a terminal.
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, const_cast<char *>(""));
    if (key == nullptr)
        return Error::make(ErrorCode::Misconfigured,
                           detail::takeOpenSslError(QStringLiteral("%1: not a valid PEM private key").arg(sourceName)));
    auto handle = std::make_shared<detail::KeyHandle>(key);
    if (!isRsa(key))
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("%1: not an RSA key").arg(sourceName));
    if (EVP_PKEY_get_bits(key) < 2048)
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("%1: RSA key of %2 bits; at least 2048 are required")
                               .arg(sourceName)
                               .arg(EVP_PKEY_get_bits(key)));
    return PrivateKey(std::move(handle));
}

core::Result<PrivateKey> PrivateKey::fromText(QByteArrayView text, KeyEncoding accepted, const QString &sourceName)
{
    if (accepted == KeyEncoding::PemOrBareBase64 && !text.contains(QByteArrayView("-----BEGIN")))
        return fromBareBase64<PrivateKey>(text, {"PRIVATE KEY", "RSA PRIVATE KEY"}, sourceName,
                                          QStringLiteral("private key"));
    return fromPem(text, sourceName);
}

core::Result<PrivateKey> PrivateKey::fromFile(const QString &path, KeyEncoding accepted)
{
    auto text = readKeyFile(path);
    if (!text)
        return text.error();
    return fromText(*text, accepted, path);
}

bool PrivateKey::isNull() const
{
    return !d;
}
int PrivateKey::bits() const
{
    return d ? EVP_PKEY_get_bits(d->key) : 0;
}

core::Result<QByteArray> PrivateKey::sign(QByteArrayView message) const
{
    if (!d)
        return Error::make(ErrorCode::Internal, QStringLiteral("sign with a null private key"));
    ERR_clear_error();
    MdCtxPtr ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, d->key) != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("EVP_DigestSignInit failed")));
    const auto *data = reinterpret_cast<const unsigned char *>(message.data());
    size_t length = 0;
    if (EVP_DigestSign(ctx.get(), nullptr, &length, data, static_cast<size_t>(message.size())) != 1)
        return Error::make(ErrorCode::Internal,
                           detail::takeOpenSslError(QStringLiteral("EVP_DigestSign (size) failed")));
    QByteArray signature(static_cast<qsizetype>(length), Qt::Uninitialized);
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char *>(signature.data()), &length, data,
                       static_cast<size_t>(message.size()))
        != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("EVP_DigestSign failed")));
    signature.resize(static_cast<qsizetype>(length));
    return signature;
}

core::Result<QByteArray> PrivateKey::signBase64(QByteArrayView message) const
{
    auto raw = sign(message);
    if (!raw)
        return raw.error();
    return raw->toBase64();
}

PublicKey PrivateKey::publicKey() const
{
    if (!d)
        return {};
    // EVP_PKEY of a private key can verify too; sharing it is simplest and safe (immutable).
    return PublicKey(d);
}

core::Result<QByteArray> PrivateKey::toPem() const
{
    if (!d)
        return Error::make(ErrorCode::Internal, QStringLiteral("toPem of a null private key"));
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), d->key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return Error::make(ErrorCode::Internal,
                           detail::takeOpenSslError(QStringLiteral("PEM_write_bio_PrivateKey failed")));
    return bioContents(bio.get());
}

// ---- PublicKey --------------------------------------------------------------------

PublicKey::PublicKey() = default;
PublicKey::~PublicKey() = default;
PublicKey::PublicKey(const PublicKey &) = default;
PublicKey &PublicKey::operator=(const PublicKey &) = default;
PublicKey::PublicKey(std::shared_ptr<detail::KeyHandle> handle) : d(std::move(handle))
{
}

core::Result<PublicKey> PublicKey::fromPem(QByteArrayView pem, const QString &sourceName)
{
    ERR_clear_error();
    EVP_PKEY *key = nullptr;
    if (pem.contains(QByteArrayView("-----BEGIN CERTIFICATE-----"))) {
        BioPtr bio = memoryBio(pem);
        std::unique_ptr<X509, X509Deleter> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
        if (cert)
            key = X509_get_pubkey(cert.get()); // a new reference
    } else if (pem.contains(QByteArrayView("-----BEGIN PUBLIC KEY-----"))
               || pem.contains(QByteArrayView("-----BEGIN RSA PUBLIC KEY-----"))) {
        // The OpenSSL 3 decoder reads both SubjectPublicKeyInfo and PKCS#1 RSAPublicKey.
        OSSL_DECODER_CTX *decoder = OSSL_DECODER_CTX_new_for_pkey(&key, "PEM", nullptr, "RSA", EVP_PKEY_PUBLIC_KEY,
                                                                  nullptr, nullptr);
        if (decoder != nullptr) {
            const auto *data = reinterpret_cast<const unsigned char *>(pem.data());
            size_t length = static_cast<size_t>(pem.size());
            if (OSSL_DECODER_from_data(decoder, &data, &length) != 1) {
                EVP_PKEY_free(key);
                key = nullptr;
            }
            OSSL_DECODER_CTX_free(decoder);
        }
    } else {
        return Error::make(
            ErrorCode::Misconfigured,
            QStringLiteral("%1: not a PEM public key (expected \"-----BEGIN PUBLIC KEY-----\" or a certificate)")
                .arg(sourceName));
    }
    if (key == nullptr)
        return Error::make(ErrorCode::Misconfigured,
                           detail::takeOpenSslError(QStringLiteral("%1: not a valid PEM public key").arg(sourceName)));
    auto handle = std::make_shared<detail::KeyHandle>(key);
    if (!isRsa(key))
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("%1: not an RSA key").arg(sourceName));
    return PublicKey(std::move(handle));
}

core::Result<PublicKey> PublicKey::fromText(QByteArrayView text, KeyEncoding accepted, const QString &sourceName)
{
    if (accepted == KeyEncoding::PemOrBareBase64 && !text.contains(QByteArrayView("-----BEGIN")))
        return fromBareBase64<PublicKey>(text, {"PUBLIC KEY", "RSA PUBLIC KEY"}, sourceName,
                                         QStringLiteral("public key"));
    return fromPem(text, sourceName);
}

core::Result<PublicKey> PublicKey::fromFile(const QString &path, KeyEncoding accepted)
{
    auto text = readKeyFile(path);
    if (!text)
        return text.error();
    return fromText(*text, accepted, path);
}

bool PublicKey::isNull() const
{
    return !d;
}

bool PublicKey::verify(QByteArrayView message, QByteArrayView signature) const
{
    if (!d || signature.isEmpty())
        return false;
    MdCtxPtr ctx(EVP_MD_CTX_new());
    bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, d->key) == 1
              && EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char *>(signature.data()),
                                  static_cast<size_t>(signature.size()),
                                  reinterpret_cast<const unsigned char *>(message.data()),
                                  static_cast<size_t>(message.size()))
                     == 1;
    ERR_clear_error(); // a failed verification leaves reasons we do not want to leak into later calls
    return ok;
}

bool PublicKey::verifyBase64(QByteArrayView message, QByteArrayView signatureBase64) const
{
    auto decoded = QByteArray::fromBase64Encoding(signatureBase64.toByteArray(),
                                                  QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return false;
    return verify(message, *decoded);
}

core::Result<QByteArray> PublicKey::toPem() const
{
    if (!d)
        return Error::make(ErrorCode::Internal, QStringLiteral("toPem of a null public key"));
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_PUBKEY(bio.get(), d->key) != 1)
        return Error::make(ErrorCode::Internal,
                           detail::takeOpenSslError(QStringLiteral("PEM_write_bio_PUBKEY failed")));
    return bioContents(bio.get());
}

// ---- generation -------------------------------------------------------------------

core::Result<PrivateKey> generateRsaKey(int bits)
{
    if (bits < 2048)
        return Error::make(ErrorCode::InvalidInput, QStringLiteral("RSA keys need at least 2048 bits"));
    ERR_clear_error();
    EVP_PKEY *key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits));
    if (key == nullptr)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("RSA key generation failed")));
    return PrivateKey(std::make_shared<detail::KeyHandle>(key));
}

} // namespace payonce::crypto
