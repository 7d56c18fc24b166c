#include "core/confirm/idempotencykey.h"

#include <algorithm>

namespace payonce::core {

IdempotencyKeyCheck checkIdempotencyKey(QStringView key)
{
    if (key.isEmpty())
        return IdempotencyKeyCheck::Missing;
    if (key.size() > 255)
        return IdempotencyKeyCheck::Invalid;
    const bool printable = std::all_of(key.begin(), key.end(),
                                       [](QChar c) { return c.unicode() >= 0x20 && c.unicode() <= 0x7E; });
    return printable ? IdempotencyKeyCheck::Valid : IdempotencyKeyCheck::Invalid;
}

} // namespace payonce::core
