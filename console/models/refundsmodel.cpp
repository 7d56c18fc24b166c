#include "refundsmodel.h"

#include "localformat.h"

#include "shared/money.h"

#include <QColor>
#include <QRegularExpression>

namespace payonce::console {

RefundsModel::RefundsModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("refund_no"), tr("Refund")},
                      {QStringLiteral("status"), tr("Status")},
                      {QStringLiteral("amount"), tr("Amount")},
                      {QStringLiteral("partial"), tr("Partial")},
                      {QStringLiteral("items"), tr("Items back")},
                      {QStringLiteral("channel"), tr("Channel")},
                      {QStringLiteral("pay_no"), tr("pay_no")},
                      {QStringLiteral("own_payment"), tr("Own payment")},
                      {QStringLiteral("attempts"), tr("Attempts")},
                      {QStringLiteral("last_error"), tr("Last error")},
                      {QStringLiteral("updated_at"), tr("Updated")}},
                     parent)
{
}

RefundsModel::Totals RefundsModel::totals() const
{
    Totals out;
    for (int row = 0; row < rowCount(); ++row) {
        const QJsonObject r = rowObject(row);
        const qint64 fen = parseAmountFen(r.value(QStringLiteral("amount")).toString()).value_or(0);
        const QString status = r.value(QStringLiteral("status")).toString();
        if (status == u"succeeded")
            out.succeededFen += fen;
        else if (status == u"failed")
            out.failedFen += fen;
        else
            out.openFen += fen;
    }
    return out;
}

QString RefundsModel::summary() const
{
    if (rowCount() == 0)
        return tr("No refund yet.");
    const Totals t = totals();
    QString text = tr("%n refund(s): %1 given back", nullptr, rowCount()).arg(localAmount(t.succeededFen));
    if (t.openFen > 0)
        text += tr(", %1 in flight").arg(localAmount(t.openFen));
    if (t.failedFen > 0)
        text += tr(", %1 failed (nothing went back)").arg(localAmount(t.failedFen));
    return text + u'.';
}

QVariant RefundsModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (key == u"status" && role == Qt::DecorationRole) {
        const QString status = row.value(key).toString();
        if (status == u"failed")
            return QColor(0xd6, 0x27, 0x28);
        if (status != u"succeeded")
            return QColor(0xff, 0xa5, 0x00); // still open: the money may still go back
    }
    return {};
}

std::optional<QJsonObject> RefundProposalInput::body(QString *error) const
{
    auto refuse = [error](const QString &why) {
        if (error)
            *error = why;
        return std::optional<QJsonObject>();
    };
    if (orderNo.trimmed().isEmpty())
        return refuse(QObject::tr("Which order? Type its order_no."));
    if (reason.trimmed().isEmpty())
        return refuse(QObject::tr("Say why: the reason goes into the audit trail."));
    QJsonObject out{{QStringLiteral("kind"), QStringLiteral("refund")},
                    {QStringLiteral("order_no"), orderNo.trimmed()},
                    {QStringLiteral("reason"), reason.trimmed()}};
    const QString amountText = amount.trimmed();
    if (!amountText.isEmpty()) {
        const auto fen = parseAmountFen(amountText);
        if (!fen || *fen <= 0)
            return refuse(QObject::tr("The amount must be positive, like 20.00."));
        out.insert(QStringLiteral("amount"), formatAmountFen(*fen));
    }
    const QString itemsTyped = items.trimmed();
    if (!itemsTyped.isEmpty()) {
        if (amountText.isEmpty())
            return refuse(QObject::tr("Items go back with an amount: say how much is refunded for them."));
        static const QRegularExpression itemPattern(
            QStringLiteral("^([A-Za-z0-9_-]{1,64})\\s*[xX×*]\\s*([0-9]{1,7})$"));
        QJsonArray list;
        QStringList seen;
        for (const QString &part : itemsTyped.split(u',', Qt::SkipEmptyParts)) {
            const auto match = itemPattern.match(part.trimmed());
            if (!match.hasMatch())
                return refuse(
                    QObject::tr("\"%1\" is not an item: write SKU x quantity, e.g. SKU-1 x2.").arg(part.trimmed()));
            const QString sku = match.captured(1);
            const qint64 qty = match.captured(2).toLongLong();
            if (qty < 1)
                return refuse(QObject::tr("The quantity of %1 must be at least 1.").arg(sku));
            if (seen.contains(sku))
                return refuse(QObject::tr("%1 is named twice.").arg(sku));
            seen << sku;
            list.append(QJsonObject{{QStringLiteral("sku_id"), sku}, {QStringLiteral("qty"), qty}});
        }
        out.insert(QStringLiteral("items"), list);
    }
    return out;
}

QString RefundProposalInput::describe() const
{
    const QString what = amount.trimmed().isEmpty() ? QObject::tr("a refund of what is left")
                                                    : QObject::tr("a refund of %1").arg(amount.trimmed());
    const QString with = items.trimmed().isEmpty() ? QString() : QObject::tr(" with %1").arg(items.trimmed());
    return QObject::tr("%1%2 of %3").arg(what, with, orderNo.trimmed());
}

} // namespace payonce::console
