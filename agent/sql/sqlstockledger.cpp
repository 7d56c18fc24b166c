#include "sqlstockledger.h"

#include "dialectsql.h"

#include "core/qa/mutants.h"

namespace payonce::sql {

using core::Error;
using core::ErrorCode;

core::Result<void> lockOrder(Session &session, const QString &orderNo)
{
    auto locked = session.exec(QStringLiteral("SELECT order_no FROM orders WHERE order_no = ?")
                                   + forUpdate(session.dialect()),
                               {orderNo}, QStringLiteral("lock order"));
    if (!locked)
        return locked.error();
    if (!locked.value().next())
        return Error::make(ErrorCode::NotFound, QStringLiteral("no order %1").arg(orderNo));
    return {};
}

core::Result<QMap<QString, qint64>> netStockOf(Session &session, const QString &orderNo)
{
    auto net = session.exec(QStringLiteral("SELECT sku_id, SUM(qty) FROM stock_log WHERE order_no = ? GROUP BY sku_id "
                                           "ORDER BY sku_id"),
                            {orderNo}, QStringLiteral("net stock of the order"));
    if (!net)
        return net.error();
    QMap<QString, qint64> out;
    while (net.value().next())
        out.insert(net.value().value(0).toString(), net.value().value(1).toLongLong());
    return out;
}

core::Result<StockGiveBack> giveBackStock(Session &session, const QString &orderNo, const QMap<QString, qint64> &wanted,
                                          const QString &entryKey, const QString &reason, qint64 fence, qint64 nowMs)
{
    auto held = netStockOf(session, orderNo);
    if (!held)
        return held.error();
    static const QStringList columns{QStringLiteral("order_no"),  QStringLiteral("sku_id"), QStringLiteral("entry_key"),
                                     QStringLiteral("reason"),    QStringLiteral("qty"),    QStringLiteral("fence"),
                                     QStringLiteral("created_at")};
    StockGiveBack out;
    for (auto it = wanted.cbegin(); it != wanted.cend(); ++it) {
        const qint64 qty = std::min(it.value(), held.value().value(it.key()));
        if (qty <= 0) {
            out.refused.insert(it.key(), kNothingTaken);
            continue;
        }
        if (!core::mutants::isOn(core::mutants::Mutant::StockRestoreUnkeyed)) {
            auto logged = session.execAffected(
                insertIfAbsentSql(session.dialect(), QStringLiteral("stock_log"), columns, QStringLiteral("id")),
                {orderNo, it.key(), entryKey, reason, -qty, fence, nowMs}, QStringLiteral("stock give-back"));
            if (!logged)
                return logged.error();
            if (logged.value() == 0)
                continue; // given back under this key before: nothing again
        }
        auto back = session.execAffected(
            QStringLiteral("UPDATE skus SET stock = stock + ?, updated_at = ? WHERE sku_id = ?"),
            {qty, nowMs, it.key()}, QStringLiteral("stock back on the shelf"));
        if (!back)
            return back.error();
        out.restored.insert(it.key(), qty);
    }
    return out;
}

} // namespace payonce::sql
