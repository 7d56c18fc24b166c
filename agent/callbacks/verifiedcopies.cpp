#include "verifiedcopies.h"

#include "crypto/sha256.h"

#include <charconv>

namespace payonce::callbacks {

QByteArray VerifiedCopies::keyOf(const core::RawDelivery &delivery)
{
    // One buffer hashed once: each part preceded by its length, header names lower-cased in
    // place. This runs on the HTTP event loop for every copy (handleFromMemory), where a
    // dozen small allocations and digest updates a delivery showed in the profile.
    qsizetype size = 16 + delivery.body.size();
    for (const auto &[name, value] : delivery.headers)
        size += 24 + name.size() + value.size();
    QByteArray bytes;
    bytes.reserve(size);
    // Appends "<length>:<part>" and answers where the part starts.
    const auto add = [&bytes](QByteArrayView part) {
        char digits[24];
        const auto written = std::to_chars(digits, digits + sizeof digits, part.size());
        bytes.append(digits, written.ptr - digits).append(':');
        const qsizetype at = bytes.size();
        bytes.append(part);
        return at;
    };
    const char channel = char('0' + int(delivery.channel));
    add(QByteArrayView(&channel, 1));
    for (const auto &[name, value] : delivery.headers) {
        const qsizetype at = add(name);
        for (char *c = bytes.data() + at, *end = c + name.size(); c != end; ++c) {
            if (*c >= 'A' && *c <= 'Z')
                *c = char(*c - 'A' + 'a');
        }
        add(value);
    }
    add(delivery.body);
    crypto::Sha256 hash;
    hash.add(bytes);
    return hash.result();
}

std::optional<core::PaymentNotification> VerifiedCopies::find(const QByteArray &key)
{
    auto found = m_cache.find(key);
    if (found)
        m_hits.fetch_add(1);
    return found;
}

} // namespace payonce::callbacks
