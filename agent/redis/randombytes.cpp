#include "randombytes.h"

#include <QByteArray>

#include <openssl/err.h>
#include <openssl/rand.h>

namespace payonce::redis {

core::Result<QString> randomHex(int bytes)
{
    QByteArray buffer(bytes, Qt::Uninitialized);
    if (RAND_bytes(reinterpret_cast<unsigned char *>(buffer.data()), bytes) != 1) {
        char text[256] = {};
        ERR_error_string_n(ERR_get_error(), text, sizeof text);
        return core::Error::make(core::ErrorCode::Internal,
                                 QStringLiteral("RAND_bytes failed: %1").arg(QString::fromLatin1(text)),
                                 QStringLiteral("internal error"));
    }
    return QString::fromLatin1(buffer.toHex());
}

} // namespace payonce::redis
