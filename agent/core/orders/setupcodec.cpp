#include "core/orders/setupcodec.h"

#include "shared/money.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>

namespace payonce::core::setupcodec {

namespace {

// JSON numbers are doubles; integers past 2^53 would lose digits, so they are refused.
constexpr qint64 kMaxJsonInteger = (qint64(1) << 53);

SetupError missing(const QString &field)
{
    return SetupError::invalid(QStringLiteral("missing field \"%1\"").arg(field));
}

SetupError wrongType(const QString &field, const QString &expected)
{
    return SetupError::invalid(QStringLiteral("field \"%1\" must be %2").arg(field, expected));
}

bool isAbsent(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull();
}

/// An integral JSON number, or nullopt (a string, 1.5, 1e300, …).
std::optional<qint64> integerOf(const QJsonValue &value)
{
    if (!value.isDouble())
        return std::nullopt;
    // toInteger() answers its default for a non-integral value: two defaults that differ
    // tell "not an integer" from a real value.
    const qint64 a = value.toInteger(0);
    const qint64 b = value.toInteger(1);
    if (a != b || a > kMaxJsonInteger || a < -kMaxJsonInteger)
        return std::nullopt;
    return a;
}

SetupResult<QString> stringField(const QJsonObject &object, const QString &key, const QString &path)
{
    const QJsonValue value = object.value(key);
    if (isAbsent(value))
        return missing(path);
    if (!value.isString())
        return wrongType(path, QStringLiteral("a string"));
    return value.toString();
}

SetupResult<qint64> integerField(const QJsonObject &object, const QString &key, const QString &path)
{
    const QJsonValue value = object.value(key);
    if (isAbsent(value))
        return missing(path);
    const auto integer = integerOf(value);
    if (!integer)
        return wrongType(path, QStringLiteral("an integer"));
    return *integer;
}

QJsonValue nullable(const std::optional<QString> &text)
{
    return text ? QJsonValue(*text) : QJsonValue(QJsonValue::Null);
}

QJsonValue nullableText(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

QString isoTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

/// Evidence is stored as JSON text: shown as JSON when it is, else as the text.
QJsonValue evidenceValue(const QString &evidence)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(evidence.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError)
        return evidence;
    if (document.isObject())
        return document.object();
    if (document.isArray())
        return document.array();
    return evidence;
}

} // namespace

SetupResult<OrderDraft> decodeOrderDraft(const QJsonObject &body)
{
    OrderDraft order;
    auto orderNo = stringField(body, QStringLiteral("order_no"), QStringLiteral("order_no"));
    if (!orderNo)
        return orderNo.error();
    order.orderNo = orderNo.value();

    auto userId = integerField(body, QStringLiteral("user_id"), QStringLiteral("user_id"));
    if (!userId)
        return userId.error();
    order.userId = userId.value();

    const QJsonValue amount = body.value(QStringLiteral("amount"));
    if (isAbsent(amount))
        return missing(QStringLiteral("amount"));
    const auto amountFen = amount.isString() ? parseAmountFen(amount.toString()) : std::nullopt;
    if (!amountFen) {
        return SetupError{SetupErrorCode::InvalidAmount,
                          QStringLiteral("field \"amount\" must be a positive decimal string with at most 2 places, "
                                         "such as \"99.00\""),
                          {}};
    }
    order.amountFen = *amountFen;

    const QJsonValue items = body.value(QStringLiteral("items"));
    if (isAbsent(items))
        return missing(QStringLiteral("items"));
    if (!items.isArray())
        return wrongType(QStringLiteral("items"), QStringLiteral("an array"));
    const QJsonArray array = items.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString path = QStringLiteral("items[%1]").arg(i);
        if (!array.at(i).isObject())
            return wrongType(path, QStringLiteral("an object"));
        const QJsonObject item = array.at(i).toObject();
        auto skuId = stringField(item, QStringLiteral("sku_id"), path + QStringLiteral(".sku_id"));
        if (!skuId)
            return skuId.error();
        auto qty = integerField(item, QStringLiteral("qty"), path + QStringLiteral(".qty"));
        if (!qty)
            return qty.error();
        order.items.append(OrderItem{skuId.value(), qty.value()});
    }

    const QJsonValue coupon = body.value(QStringLiteral("reward_coupon_template"));
    if (!isAbsent(coupon)) {
        if (!coupon.isString())
            return wrongType(QStringLiteral("reward_coupon_template"), QStringLiteral("a string"));
        order.rewardCouponTemplate = coupon.toString();
    }

    const QJsonValue points = body.value(QStringLiteral("reward_points"));
    if (!isAbsent(points)) {
        const auto value = integerOf(points);
        if (!value)
            return wrongType(QStringLiteral("reward_points"), QStringLiteral("an integer"));
        order.rewardPoints = *value;
    }
    return order;
}

SetupResult<qint64> decodeStock(const QJsonObject &body)
{
    return integerField(body, QStringLiteral("stock"), QStringLiteral("stock"));
}

QJsonObject encodeSkuStock(const SkuStock &sku)
{
    return QJsonObject{{QStringLiteral("sku_id"), sku.skuId}, {QStringLiteral("stock"), sku.stock}};
}

QJsonObject encodeOrderDetail(const OrderDetail &order)
{
    QJsonArray items;
    for (const OrderItem &item : order.items)
        items.append(QJsonObject{{QStringLiteral("sku_id"), item.skuId}, {QStringLiteral("qty"), item.qty}});

    QJsonArray payments;
    for (const PaymentRecord &record : order.payments) {
        payments.append(QJsonObject{
            {QStringLiteral("payment_no"), record.paymentNo},
            {QStringLiteral("channel"), channelName(record.channel)},
            {QStringLiteral("status"), paymentRecordStatusName(record.status)},
            {QStringLiteral("attempt"), record.attempt},
            {QStringLiteral("amount"), formatAmountFen(record.amountFen)},
            {QStringLiteral("code_url"), nullableText(record.codeUrl)},
            {QStringLiteral("last_error"), nullableText(record.lastError)},
        });
    }

    QJsonArray stock;
    for (const StockEffect &effect : order.stock)
        stock.append(QJsonObject{{QStringLiteral("sku_id"), effect.skuId}, {QStringLiteral("qty"), effect.qty}});
    QJsonArray coupons;
    for (const CouponEffect &effect : order.coupons)
        coupons.append(
            QJsonObject{{QStringLiteral("template_id"), effect.templateId}, {QStringLiteral("status"), effect.status}});
    QJsonArray points;
    for (const PointEffect &effect : order.points)
        points.append(
            QJsonObject{{QStringLiteral("point_type"), effect.pointType}, {QStringLiteral("delta"), effect.delta}});

    QJsonArray findings;
    for (const OrderFinding &finding : order.findings) {
        findings.append(QJsonObject{
            {QStringLiteral("id"), finding.id},
            {QStringLiteral("kind"), finding.kind},
            {QStringLiteral("status"), finding.status},
            {QStringLiteral("pay_no"), nullableText(finding.payNo)},
            {QStringLiteral("evidence"), evidenceValue(finding.evidence)},
            {QStringLiteral("seen_count"), finding.seenCount},
            {QStringLiteral("first_seen_at"), isoTime(finding.firstSeenAtMs)},
            {QStringLiteral("last_seen_at"), isoTime(finding.lastSeenAtMs)},
        });
    }

    return QJsonObject{
        {QStringLiteral("order_no"), order.orderNo},
        {QStringLiteral("user_id"), order.userId},
        {QStringLiteral("amount"), formatAmountFen(order.amountFen)},
        {QStringLiteral("status"), orderStatusName(order.status)},
        {QStringLiteral("version"), order.version},
        {QStringLiteral("pay_no"), nullable(order.payNo)},
        {QStringLiteral("items"), items},
        {QStringLiteral("reward_coupon_template"), nullable(order.rewardCouponTemplate)},
        {QStringLiteral("reward_points"), order.rewardPoints},
        {QStringLiteral("payments"), payments},
        {QStringLiteral("effects"), QJsonObject{{QStringLiteral("stock"), stock},
                                                {QStringLiteral("coupons"), coupons},
                                                {QStringLiteral("points"), points}}},
        {QStringLiteral("findings"), findings},
    };
}

} // namespace payonce::core::setupcodec
