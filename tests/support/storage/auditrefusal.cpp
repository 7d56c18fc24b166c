#include "auditrefusal.h"

#include "storagefixture.h"

#include <QRegularExpression>

namespace payonce::testsupport {

namespace {
const QString kTrigger = QStringLiteral("payonce_test_refuse_audit");
const QString kFunction = QStringLiteral("payonce_test_refuse_audit_fn");
} // namespace

core::Result<void> refuseAuditRows(sql::Database &database, const QStringList &actions)
{
    static const QRegularExpression plain(QStringLiteral("^[a-z_.]+$"));
    QStringList quoted;
    for (const QString &action : actions) {
        if (!plain.match(action).hasMatch())
            return core::Error::make(core::ErrorCode::InvalidInput,
                                     QStringLiteral("not an audit action: %1").arg(action));
        quoted << u'\'' + action + u'\'';
    }
    if (quoted.isEmpty())
        return core::Error::make(core::ErrorCode::InvalidInput, QStringLiteral("no audit action to refuse"));
    const QString action = quoted.join(u',');
    if (auto dropped = allowAuditRows(database); !dropped)
        return dropped;
    switch (database.dialect()) {
    case sql::Dialect::Sqlite:
        return execSql(database, QStringLiteral("CREATE TRIGGER %1 BEFORE INSERT ON audit_log WHEN NEW.action IN (%2) "
                                                "BEGIN SELECT RAISE(ABORT, 'audit row refused by the test'); END")
                                     .arg(kTrigger, action));
    case sql::Dialect::PostgreSql:
        if (auto made = execSql(database,
                                QStringLiteral("CREATE FUNCTION %1() RETURNS trigger LANGUAGE plpgsql AS $$ "
                                               "BEGIN RAISE EXCEPTION 'audit row refused by the test'; END; $$")
                                    .arg(kFunction));
            !made)
            return made;
        return execSql(database, QStringLiteral("CREATE TRIGGER %1 BEFORE INSERT ON audit_log FOR EACH ROW "
                                                "WHEN (NEW.action IN (%2)) EXECUTE FUNCTION %3()")
                                     .arg(kTrigger, action, kFunction));
    case sql::Dialect::MariaDb:
        return execSql(database, QStringLiteral("CREATE TRIGGER %1 BEFORE INSERT ON audit_log FOR EACH ROW "
                                                "BEGIN IF NEW.action IN (%2) THEN SIGNAL SQLSTATE '45000' "
                                                "SET MESSAGE_TEXT = 'audit row refused by the test'; END IF; END")
                                     .arg(kTrigger, action));
    }
    return core::Error::make(core::ErrorCode::Internal, QStringLiteral("unknown dialect"));
}

core::Result<void> allowAuditRows(sql::Database &database)
{
    switch (database.dialect()) {
    case sql::Dialect::Sqlite:
    case sql::Dialect::MariaDb: return execSql(database, QStringLiteral("DROP TRIGGER IF EXISTS %1").arg(kTrigger));
    case sql::Dialect::PostgreSql:
        if (auto dropped = execSql(database, QStringLiteral("DROP TRIGGER IF EXISTS %1 ON audit_log").arg(kTrigger));
            !dropped)
            return dropped;
        return execSql(database, QStringLiteral("DROP FUNCTION IF EXISTS %1()").arg(kFunction));
    }
    return core::Error::make(core::ErrorCode::Internal, QStringLiteral("unknown dialect"));
}

} // namespace payonce::testsupport
