#include "serverharness.h"

#include "scratchfolder.h"

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using detail::ScratchFolder;

Dialect dialectUnderTest()
{
    const QString name = qEnvironmentVariable("PAYONCE_TEST_DIALECT").trimmed().toLower();
    if (name.isEmpty() || name == u"sqlite")
        return Dialect::Sqlite;
    if (name == u"postgresql")
        return Dialect::PostgreSql;
    if (name == u"mariadb")
        return Dialect::MariaDb;
    // A typo in a test registration must not quietly run everything against SQLite.
    qFatal("PAYONCE_TEST_DIALECT=%s: expected sqlite, postgresql or mariadb", qPrintable(name));
}

QString dialectName(Dialect dialect)
{
    switch (dialect) {
    case Dialect::Sqlite: return u"sqlite"_s;
    case Dialect::PostgreSql: return u"postgresql"_s;
    case Dialect::MariaDb: return u"mariadb"_s;
    }
    return {};
}

struct TestDatabase::Private {
    Dialect dialect = Dialect::Sqlite;
    std::unique_ptr<ScratchFolder> sqliteFolder;
    std::unique_ptr<DatabaseServer> server; ///< null for SQLite
};

TestDatabase::TestDatabase() : d(std::make_unique<Private>())
{
}

TestDatabase::~TestDatabase() = default;

std::unique_ptr<TestDatabase> TestDatabase::start(Dialect dialect, QString *error)
{
    std::unique_ptr<TestDatabase> database(new TestDatabase);
    database->d->dialect = dialect;
    switch (dialect) {
    case Dialect::Sqlite:
        database->d->sqliteFolder = ScratchFolder::create(u"sqlite"_s, QString(), error);
        if (!database->d->sqliteFolder)
            return nullptr;
        break;
    case Dialect::PostgreSql:
        database->d->server = PostgresServer::start(error);
        if (!database->d->server)
            return nullptr;
        break;
    case Dialect::MariaDb:
        database->d->server = MariaDbServer::start(error);
        if (!database->d->server)
            return nullptr;
        break;
    }
    return database;
}

Dialect TestDatabase::dialect() const
{
    return d->dialect;
}

QString TestDatabase::url() const
{
    if (d->server)
        return d->server->url();
    return u"sqlite:"_s + d->sqliteFolder->filePath(u"payonce.db"_s);
}

bool TestDatabase::restart(QString *error)
{
    if (!stop()) {
        *error = u"could not stop the %1 server"_s.arg(dialectName(d->dialect));
        return false;
    }
    return startAgain(error);
}

bool TestDatabase::stop()
{
    return !d->server || d->server->stop();
}

bool TestDatabase::startAgain(QString *error)
{
    return !d->server || d->server->startAgain(error);
}

PostgresServer *TestDatabase::postgres() const
{
    return dynamic_cast<PostgresServer *>(d->server.get());
}

MariaDbServer *TestDatabase::mariadb() const
{
    return dynamic_cast<MariaDbServer *>(d->server.get());
}

} // namespace payonce::testsupport
