#include "opensslerror_p.h"

#include <openssl/err.h>

namespace payonce::crypto::detail {

QString takeOpenSslError(const QString &what)
{
    QString reasons;
    unsigned long code = 0;
    while ((code = ERR_get_error()) != 0) {
        char buffer[256];
        ERR_error_string_n(code, buffer, sizeof buffer);
        if (!reasons.isEmpty())
            reasons += u"; ";
        reasons += QString::fromLatin1(buffer);
    }
    return reasons.isEmpty() ? what : what + u": " + reasons;
}

} // namespace payonce::crypto::detail
