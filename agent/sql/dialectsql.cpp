#include "dialectsql.h"

namespace payonce::sql {

QString insertIfAbsentSql(Dialect dialect, const QString &table, const QStringList &columns, const QString &noopColumn)
{
    QStringList marks;
    marks.fill(QStringLiteral("?"), columns.size());
    const QString insert = QStringLiteral("INSERT INTO %1 (%2) VALUES (%3)")
                               .arg(table, columns.join(QStringLiteral(", ")), marks.join(QStringLiteral(", ")));
    if (dialect == Dialect::MariaDb)
        return insert + QStringLiteral(" ON DUPLICATE KEY UPDATE %1 = %1").arg(noopColumn);
    return insert + QStringLiteral(" ON CONFLICT DO NOTHING");
}

QString forUpdate(Dialect dialect)
{
    return dialect == Dialect::Sqlite ? QString() : QStringLiteral(" FOR UPDATE");
}

} // namespace payonce::sql
