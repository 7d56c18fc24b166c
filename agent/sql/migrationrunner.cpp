#include "migrationrunner.h"

#include "logging/categories.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <map>

namespace payonce::sql {

using core::Error;
using core::ErrorCode;

namespace {

QString dialectFolder(Dialect dialect)
{
    return config::DatabaseUrl::dialectName(dialect);
}

// An arbitrary constant that names "payonce schema migration" among advisory locks.
constexpr qint64 kPostgresMigrationLock = 0x7061796f6e6365; // "payonce"

} // namespace

MigrationRunner::MigrationRunner(Database &database) : m_database(database)
{
}

QList<Migration> MigrationRunner::bundled(Dialect dialect)
{
    static const QRegularExpression fileName(QStringLiteral("^(\\d{3})_([a-z0-9_]+)\\.sql$"));
    QList<Migration> migrations;
    const QDir folder(QStringLiteral(":/payonce/sql/") + dialectFolder(dialect));
    const QStringList files = folder.entryList({QStringLiteral("*.sql")}, QDir::Files, QDir::Name);
    for (const QString &file : files) {
        const auto match = fileName.match(file);
        if (!match.hasMatch())
            continue; // the build only bundles NNN_name.sql files; anything else is not ours
        QFile f(folder.filePath(file));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray bytes = f.readAll();
        migrations.append(Migration{match.captured(1).toInt(), file.chopped(4), QString::fromUtf8(bytes),
                                    QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex()});
    }
    return migrations;
}

QStringList MigrationRunner::splitStatements(const QString &sql)
{
    QStringList statements;
    QString current;
    int blockDepth = 0; // BEGIN … END inside CREATE TRIGGER (SQLite)
    QString dollarTag;  // inside $tag$ … $tag$ (PostgreSQL)
    const qsizetype n = sql.size();
    auto startsWord = [&](qsizetype i, QStringView word) {
        if (i > 0 && (sql[i - 1].isLetterOrNumber() || sql[i - 1] == u'_'))
            return false;
        if (QStringView(sql).mid(i, word.size()).compare(word, Qt::CaseInsensitive) != 0)
            return false;
        const qsizetype end = i + word.size();
        return end >= n || !(sql[end].isLetterOrNumber() || sql[end] == u'_');
    };
    auto isTrigger = [&] {
        return current.trimmed().startsWith(QStringLiteral("CREATE TRIGGER"), Qt::CaseInsensitive);
    };
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = sql[i];
        if (!dollarTag.isEmpty()) {
            if (QStringView(sql).mid(i).startsWith(dollarTag)) {
                current += dollarTag;
                i += dollarTag.size() - 1;
                dollarTag.clear();
            } else {
                current += c;
            }
            continue;
        }
        if (c == u'-' && i + 1 < n && sql[i + 1] == u'-') { // a comment to the end of the line
            while (i < n && sql[i] != u'\n')
                ++i;
            current += u'\n';
            continue;
        }
        if (c == u'\'') { // a string literal; '' is an escaped quote
            current += c;
            for (++i; i < n; ++i) {
                current += sql[i];
                if (sql[i] == u'\'') {
                    if (i + 1 < n && sql[i + 1] == u'\'') {
                        current += sql[++i];
                        continue;
                    }
                    break;
                }
            }
            continue;
        }
        if (c == u'$') {
            static const QRegularExpression tag(QStringLiteral("^\\$[A-Za-z_]*\\$"));
            const auto match = tag.match(QStringView(sql).mid(i));
            if (match.hasMatch()) {
                dollarTag = match.captured(0);
                current += dollarTag;
                i += dollarTag.size() - 1;
                continue;
            }
        }
        if (startsWord(i, u"BEGIN") && isTrigger())
            ++blockDepth;
        else if (startsWord(i, u"END") && blockDepth > 0)
            --blockDepth;
        if (c == u';' && blockDepth == 0) {
            const QString statement = current.trimmed();
            if (!statement.isEmpty())
                statements.append(statement);
            current.clear();
            continue;
        }
        current += c;
    }
    const QString rest = current.trimmed();
    if (!rest.isEmpty())
        statements.append(rest);
    return statements;
}

core::Result<void> MigrationRunner::ensureBookkeeping(Session &session)
{
    const QString text =
        session.dialect() == Dialect::Sqlite
            ? QStringLiteral("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL PRIMARY KEY, "
                             "name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)")
            : QStringLiteral("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT NOT NULL PRIMARY KEY, "
                             "name VARCHAR(128) NOT NULL, checksum VARCHAR(64) NOT NULL, applied_at BIGINT NOT NULL)");
    auto done = session.exec(text, {}, QStringLiteral("create schema_migrations"));
    if (!done)
        return done.error();
    return {};
}

core::Result<void> MigrationRunner::checkApplied(Session &session, const QList<Migration> &known, int *highest)
{
    auto rows = session.exec(QStringLiteral("SELECT version, name, checksum FROM schema_migrations ORDER BY version"),
                             {}, QStringLiteral("read schema_migrations"));
    if (!rows)
        return rows.error();
    std::map<int, const Migration *> byVersion;
    for (const Migration &m : known)
        byVersion[m.version] = &m;
    const int newestKnown = known.isEmpty() ? 0 : known.last().version;
    *highest = 0;
    QSqlQuery &q = rows.value();
    while (q.next()) {
        const int version = q.value(0).toInt();
        const QString name = q.value(1).toString();
        *highest = std::max(*highest, version);
        if (version > newestKnown) {
            return Error::make(ErrorCode::SchemaTooNew,
                               QStringLiteral("the database schema is at version %1 (%2), newer than this payonce "
                                              "knows (up to %3): run a newer payonce-agent")
                                   .arg(version)
                                   .arg(name)
                                   .arg(newestKnown));
        }
        const auto it = byVersion.find(version);
        if (it != byVersion.end() && it->second->checksum != q.value(2).toString().toLatin1()) {
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("migration %1 in the database differs from this build's "
                                              "(checksum mismatch): it was edited after being applied")
                                   .arg(name));
        }
    }
    return {};
}

core::Result<void> MigrationRunner::apply(Session &session, const Migration &migration)
{
    const QStringList statements = splitStatements(migration.sql);
    for (qsizetype i = 0; i < statements.size(); ++i) {
        auto done = session.exec(statements[i], {},
                                 QStringLiteral("migration %1, statement %2").arg(migration.name).arg(i + 1));
        if (!done)
            return done.error();
    }
    auto recorded = session.exec(
        QStringLiteral("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)"),
        {migration.version, migration.name, QString::fromLatin1(migration.checksum),
         QDateTime::currentMSecsSinceEpoch()},
        QStringLiteral("record migration %1").arg(migration.name));
    if (!recorded)
        return recorded.error();
    qCInfo(payonce::lcSql) << "applied migration" << migration.name;
    return {};
}

core::Result<int> MigrationRunner::currentVersion()
{
    return m_database.read([&](Session &session) -> core::Result<int> {
        if (auto made = ensureBookkeeping(session); !made)
            return made.error();
        int highest = 0;
        if (auto checked = checkApplied(session, bundled(session.dialect()), &highest); !checked)
            return checked.error();
        return highest;
    });
}

core::Result<int> MigrationRunner::applyPending(Session &session, const QList<Migration> &known)
{
    if (auto made = ensureBookkeeping(session); !made)
        return made.error();
    int highest = 0;
    if (auto checked = checkApplied(session, known, &highest); !checked)
        return checked.error();
    int applied = 0;
    for (const Migration &m : known) {
        if (m.version <= highest)
            continue;
        core::Result<void> done;
        switch (session.dialect()) {
        case Dialect::Sqlite:
            done = apply(session, m); // inside migrate()'s BEGIN IMMEDIATE
            break;
        case Dialect::PostgreSql:
            // PostgreSQL DDL is transactional: the migration and its record commit together.
            done = m_database.write([&](Session &tx) { return apply(tx, m); });
            break;
        case Dialect::MariaDb:
            done = apply(session, m);
            if (!done) {
                Error error = done.error();
                error.internalMessage += QStringLiteral(" — MariaDB commits DDL as it goes; the schema may be "
                                                        "partly migrated and needs a look before a retry");
                done = error;
            }
            break;
        }
        if (!done)
            return done.error();
        ++applied;
    }
    return applied;
}

core::Result<int> MigrationRunner::migrate()
{
    const QList<Migration> known = bundled(m_database.dialect());
    if (known.isEmpty()) {
        return Error::make(
            ErrorCode::Internal,
            QStringLiteral("no migrations are built in for %1").arg(dialectFolder(m_database.dialect())));
    }
    const Dialect dialect = m_database.dialect();

    if (dialect == Dialect::Sqlite) {
        // One BEGIN IMMEDIATE around read-and-apply: SQLite's single writer is the lock.
        // Foreign keys are off meanwhile (on this thread's connection; the pragma is a no-op
        // inside a transaction): changing a CHECK means rebuilding the table, and dropping a
        // referenced table would otherwise fail. foreign_key_check proves nothing dangles
        // before COMMIT.
        auto off = m_database.read([](Session &session) -> core::Result<void> {
            auto done = session.exec(QStringLiteral("PRAGMA foreign_keys=OFF"), {}, QStringLiteral("foreign keys off"));
            if (!done)
                return done.error();
            return {};
        });
        if (!off)
            return off.error();
        auto applied = m_database.write([&](Session &session) -> core::Result<int> {
            auto result = applyPending(session, known);
            if (!result)
                return result;
            auto dangling = session.exec(QStringLiteral("PRAGMA foreign_key_check"), {},
                                         QStringLiteral("foreign key check"));
            if (!dangling)
                return dangling.error();
            if (dangling.value().next()) {
                return Error::make(ErrorCode::Internal, QStringLiteral("a migration left a dangling reference in %1")
                                                            .arg(dangling.value().value(0).toString()));
            }
            return result;
        });
        auto on = m_database.read([](Session &session) -> core::Result<void> {
            auto done = session.exec(QStringLiteral("PRAGMA foreign_keys=ON"), {}, QStringLiteral("foreign keys on"));
            if (!done)
                return done.error();
            return {};
        });
        if (applied && !on)
            return on.error();
        return applied;
    }

    // PostgreSQL and MariaDB: a session-level lock held across the migrations, taken and
    // released on this thread's connection.
    return m_database.read([&](Session &session) -> core::Result<int> {
        const bool postgres = dialect == Dialect::PostgreSql;
        auto locked = postgres ? session.exec(QStringLiteral("SELECT pg_advisory_lock(?)"), {kPostgresMigrationLock},
                                              QStringLiteral("migration lock"))
                               : session.exec(QStringLiteral("SELECT GET_LOCK('payonce.migrations', 60)"), {},
                                              QStringLiteral("migration lock"));
        if (!locked)
            return locked.error();
        if (!postgres && (!locked.value().next() || locked.value().value(0).toInt() != 1))
            return Error::make(ErrorCode::Busy, QStringLiteral("another agent held the migration lock for 60 s"));
        auto result = applyPending(session, known);
        if (!session.isBroken()) {
            (void)(postgres ? session.exec(QStringLiteral("SELECT pg_advisory_unlock(?)"), {kPostgresMigrationLock})
                            : session.exec(QStringLiteral("SELECT RELEASE_LOCK('payonce.migrations')")));
        }
        return result;
    });
}

} // namespace payonce::sql
