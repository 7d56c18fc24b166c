#include "core/settlement/partialrefund.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace payonce::core {

qint64 pointsTakenBack(qint64 rewardPoints, qint64 refundedFen, qint64 paidFen)
{
    if (rewardPoints <= 0 || paidFen <= 0 || refundedFen <= 0)
        return 0;
    const qint64 refunded = std::min(refundedFen, paidFen);
    // A 128-bit product: points times fen passes 2^63 only for absurd inputs, but money
    // code does not get to overflow quietly. The quotient is at most rewardPoints.
    __extension__ typedef __int128 Wide;
    const Wide product = static_cast<Wide>(rewardPoints) * refunded;
    return static_cast<qint64>(product / paidFen);
}

QJsonObject refundItemsObject(const RefundItems &items)
{
    QJsonObject object;
    for (auto it = items.cbegin(); it != items.cend(); ++it)
        object.insert(it.key(), it.value());
    return object;
}

QString refundItemsText(const RefundItems &items)
{
    if (items.isEmpty())
        return {};
    return QString::fromUtf8(QJsonDocument(refundItemsObject(items)).toJson(QJsonDocument::Compact));
}

RefundItems refundItemsFromText(const QString &text)
{
    RefundItems items;
    if (text.isEmpty())
        return items;
    const QJsonObject object = QJsonDocument::fromJson(text.toUtf8()).object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        const qint64 qty = it.value().toInteger();
        if (qty > 0)
            items.insert(it.key(), qty);
    }
    return items;
}

} // namespace payonce::core
