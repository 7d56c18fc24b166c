#include "core/ports/idempotencycache.h"

#include <QList>

namespace payonce::core {

namespace {

// A unit separator: never in an order number, a payment number or a currency code.
constexpr char kSeparator = '\x1f';

} // namespace

QByteArray SeenPayment::encoded() const
{
    return orderNo.toUtf8() + kSeparator + paymentNo.toUtf8() + kSeparator + QByteArray::number(amountFen) + kSeparator
           + currency.toUtf8();
}

std::optional<SeenPayment> SeenPayment::decode(const QByteArray &stored)
{
    const QList<QByteArray> fields = stored.split(kSeparator);
    if (fields.size() != 4 || fields.at(0).isEmpty())
        return std::nullopt;
    bool ok = false;
    const qint64 amount = fields.at(2).toLongLong(&ok);
    if (!ok)
        return std::nullopt;
    return SeenPayment{QString::fromUtf8(fields.at(0)), QString::fromUtf8(fields.at(1)), amount,
                       QString::fromUtf8(fields.at(3))};
}

} // namespace payonce::core
