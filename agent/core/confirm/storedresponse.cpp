#include "core/ports/idempotencystore.h"

namespace payonce::core {

QByteArray StoredResponse::encode() const
{
    return outcome.toUtf8() + '\n' + body;
}

std::optional<StoredResponse> StoredResponse::decode(const QByteArray &bytes)
{
    const qsizetype newline = bytes.indexOf('\n');
    if (newline <= 0)
        return std::nullopt;
    return StoredResponse{QString::fromUtf8(bytes.left(newline)), bytes.mid(newline + 1)};
}

} // namespace payonce::core
