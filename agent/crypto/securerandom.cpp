#include "securerandom.h"

#include "opensslerror_p.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

namespace payonce::crypto {

using core::Error;
using core::ErrorCode;

core::Result<QByteArray> randomBytes(int count)
{
    if (count < 0)
        return Error::make(ErrorCode::Internal, QStringLiteral("randomBytes: negative count"));
    QByteArray bytes(count, Qt::Uninitialized);
    if (count > 0 && RAND_bytes(reinterpret_cast<unsigned char *>(bytes.data()), count) != 1)
        return Error::make(ErrorCode::Internal, detail::takeOpenSslError(QStringLiteral("RAND_bytes failed")));
    return bytes;
}

core::Result<QString> randomHex(int bytes)
{
    auto raw = randomBytes(bytes);
    if (!raw)
        return raw.error();
    return QString::fromLatin1(raw->toHex());
}

core::Result<QString> nonceString(int length)
{
    static constexpr char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    constexpr int alphabetSize = 36;
    constexpr int limit = 256 - (256 % alphabetSize); // reject bytes >= 252 to stay uniform
    QString out;
    out.reserve(length);
    while (out.size() < length) {
        auto raw = randomBytes(length);
        if (!raw)
            return raw.error();
        for (char c : std::as_const(*raw)) {
            const int v = static_cast<unsigned char>(c);
            if (v >= limit)
                continue;
            out += QLatin1Char(alphabet[v % alphabetSize]);
            if (out.size() == length)
                break;
        }
    }
    return out;
}

bool constantTimeEquals(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    if (a.isEmpty())
        return true;
    return CRYPTO_memcmp(a.data(), b.data(), static_cast<size_t>(a.size())) == 0;
}

} // namespace payonce::crypto
