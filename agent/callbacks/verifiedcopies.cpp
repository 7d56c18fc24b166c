#include "verifiedcopies.h"

#include "crypto/sha256.h"

namespace payonce::callbacks {

QByteArray VerifiedCopies::keyOf(const core::RawDelivery &delivery)
{
    crypto::Sha256 hash;
    const auto add = [&hash](QByteArrayView part) {
        const QByteArray length = QByteArray::number(part.size()) + ':';
        hash.add(length);
        hash.add(part);
    };
    add(QByteArray::number(int(delivery.channel)));
    for (const auto &[name, value] : delivery.headers) {
        add(name.toLower());
        add(value);
    }
    add(delivery.body);
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
