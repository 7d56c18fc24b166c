#include "sqlbreakermodestore.h"

#include "dialectsql.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::sql {

using core::BreakerModeSetting;

namespace {
const QString kPrefix = QStringLiteral("breaker.");
} // namespace

core::Result<QHash<QString, BreakerModeSetting>> SqlBreakerModeStore::all()
{
    return m_database.read([&](Session &session) -> core::Result<QHash<QString, BreakerModeSetting>> {
        auto query = session.exec(
            QStringLiteral("SELECT name, value, updated_by, reason, updated_at FROM settings WHERE name LIKE ?"),
            {QString(kPrefix + QLatin1Char('%'))}, QStringLiteral("read breaker modes"));
        if (!query)
            return query.error();
        QHash<QString, BreakerModeSetting> out;
        QSqlQuery &q = query.value();
        while (q.next()) {
            const QJsonObject value = QJsonDocument::fromJson(q.value(1).toString().toUtf8()).object();
            const auto mode = core::breakerModeFromName(value.value(QStringLiteral("mode")).toString());
            if (!mode)
                continue; // a setting this agent does not understand is not obeyed half-way
            BreakerModeSetting setting;
            setting.mode = *mode;
            setting.actor = q.value(2).toString();
            setting.reason = q.value(3).toString();
            setting.changedAtMs = value.contains(QStringLiteral("changed_at_ms"))
                                      ? value.value(QStringLiteral("changed_at_ms")).toInteger()
                                      : q.value(4).toLongLong();
            if (value.contains(QStringLiteral("expires_at_ms")))
                setting.expiresAtMs = value.value(QStringLiteral("expires_at_ms")).toInteger();
            out.insert(q.value(0).toString().mid(kPrefix.size()), setting);
        }
        return out;
    });
}

core::Result<void> SqlBreakerModeStore::set(const QString &breaker, const BreakerModeSetting &setting)
{
    QJsonObject value{{QStringLiteral("mode"), core::breakerModeName(setting.mode)},
                      {QStringLiteral("changed_at_ms"), setting.changedAtMs}};
    if (setting.expiresAtMs)
        value.insert(QStringLiteral("expires_at_ms"), *setting.expiresAtMs);
    const QString json = QString::fromUtf8(QJsonDocument(value).toJson(QJsonDocument::Compact));
    const QString name = kPrefix + breaker;
    return m_database.write([&](Session &session) -> core::Result<void> {
        static const QStringList columns{QStringLiteral("name"),       QStringLiteral("value"),
                                         QStringLiteral("version"),    QStringLiteral("updated_at"),
                                         QStringLiteral("updated_by"), QStringLiteral("reason")};
        auto inserted = session.execAffected(
            insertIfAbsentSql(session.dialect(), QStringLiteral("settings"), columns, QStringLiteral("name")),
            {name, json, 1, setting.changedAtMs, setting.actor, setting.reason}, QStringLiteral("insert breaker mode"));
        if (!inserted)
            return inserted.error();
        if (inserted.value() == 1)
            return {};
        auto updated = session.execAffected(
            QStringLiteral("UPDATE settings SET value = ?, version = version + 1, updated_at = ?, updated_by = ?, "
                           "reason = ? WHERE name = ?"),
            {json, setting.changedAtMs, setting.actor, setting.reason, name}, QStringLiteral("update breaker mode"));
        if (!updated)
            return updated.error();
        return {};
    });
}

} // namespace payonce::sql
