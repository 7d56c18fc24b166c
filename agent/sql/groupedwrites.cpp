#include "groupedwrites.h"

namespace payonce::sql {

core::Result<QList<int>> execGrouped(Session &session, const QList<GroupedWrite> &writes, const QString &what)
{
    QList<int> counts;
    if (session.dialect() != Dialect::PostgreSql) {
        for (const GroupedWrite &write : writes) {
            auto affected = session.execAffected(write.sql, write.binds, what);
            if (!affected)
                return affected.error();
            counts.append(affected.value());
        }
        return counts;
    }
    QStringList parts;
    QStringList selected;
    QVariantList binds;
    for (qsizetype i = 0; i < writes.size(); ++i) {
        parts << QStringLiteral("w%1 AS (%2 RETURNING 1)").arg(i).arg(writes.at(i).sql);
        selected << QStringLiteral("(SELECT count(*) FROM w%1)").arg(i);
        binds << writes.at(i).binds;
    }
    const QString sql = QStringLiteral("WITH ") + parts.join(QStringLiteral(", ")) + QStringLiteral(" SELECT ")
                        + selected.join(QStringLiteral(", "));
    auto read = session.forEachRow(
        sql, binds,
        [&](const QSqlQuery &row) -> core::Result<void> {
            for (qsizetype i = 0; i < writes.size(); ++i)
                counts.append(row.value(int(i)).toInt());
            return {};
        },
        what);
    if (!read)
        return read.error();
    if (counts.size() != writes.size())
        return core::Error::make(core::ErrorCode::Internal,
                                 what + QStringLiteral(": the grouped write answered no row"));
    return counts;
}

QString castParameters(const QStringList &types)
{
    QStringList casts;
    for (const QString &type : types)
        casts << QStringLiteral("CAST(? AS %1)").arg(type);
    return casts.join(QStringLiteral(", "));
}

} // namespace payonce::sql
