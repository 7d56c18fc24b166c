#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <memory>

namespace payonce::crypto {

/// SHA-256 fed in parts, through OpenSSL's EVP (which uses the CPU's SHA instructions
/// where it has them: several times faster than QCryptographicHash on the callback path,
/// where every copy of a notification is hashed). One object per digest; not thread-safe.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256 &) = delete;
    Sha256 &operator=(const Sha256 &) = delete;

    void add(QByteArrayView part);
    /// The 32-byte digest of everything added; the object is spent afterwards.
    QByteArray result();

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace payonce::crypto
