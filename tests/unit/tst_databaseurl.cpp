#include "config/databaseurl.h"
#include "config/redisurl.h"

#include <QTest>

using namespace payonce::config;
using Dialect = DatabaseUrl::Dialect;

Q_DECLARE_METATYPE(payonce::config::DatabaseUrl::Dialect)

namespace {

/// A URL refused as misconfigured: one line that starts with `prefix` and names `message`,
/// never the password ("secretpw"), told the client as it is logged.
void verifyRefusedUrl(const payonce::core::Error &error, QStringView prefix, const QString &message)
{
    QCOMPARE(error.code, payonce::core::ErrorCode::Misconfigured);
    const QString &text = error.internalMessage;
    QVERIFY2(text.startsWith(prefix), qPrintable(text));
    QVERIFY2(text.contains(message), qPrintable(text));
    QVERIFY2(!text.contains(u'\n'), qPrintable(text));
    QVERIFY2(!text.contains(u"secretpw"), qPrintable(text));
    QCOMPARE(error.publicMessage, text);
}

} // namespace

class TestDatabaseUrl : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void good_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<Dialect>("dialect");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("password");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("database");
        QTest::addColumn<QString>("sqlitePath");
        QTest::addColumn<QString>("redacted");

        QTest::newRow("sqlite relative") << u"sqlite:./payonce-data/payonce.db"_qs << Dialect::Sqlite << QString()
                                         << QString() << QString() << 0 << QString() << u"./payonce-data/payonce.db"_qs
                                         << u"sqlite:./payonce-data/payonce.db"_qs;
        QTest::newRow("sqlite absolute") << u"sqlite:/var/lib/payonce/p.db"_qs << Dialect::Sqlite << QString()
                                         << QString() << QString() << 0 << QString() << u"/var/lib/payonce/p.db"_qs
                                         << u"sqlite:/var/lib/payonce/p.db"_qs;
        QTest::newRow("sqlite memory") << u"sqlite::memory:"_qs << Dialect::Sqlite << QString() << QString()
                                       << QString() << 0 << QString() << u":memory:"_qs << u"sqlite::memory:"_qs;
        QTest::newRow("postgresql full") << u"postgresql://payonce:s3cret@127.0.0.1:5433/payonce"_qs
                                         << Dialect::PostgreSql << u"payonce"_qs << u"s3cret"_qs << u"127.0.0.1"_qs
                                         << 5433 << u"payonce"_qs << QString()
                                         << u"postgresql://payonce:***@127.0.0.1:5433/payonce"_qs;
        QTest::newRow("postgresql default port")
            << u"postgresql://payonce:pw@db.local/payonce"_qs << Dialect::PostgreSql << u"payonce"_qs << u"pw"_qs
            << u"db.local"_qs << 5432 << u"payonce"_qs << QString()
            << u"postgresql://payonce:***@db.local:5432/payonce"_qs;
        QTest::newRow("postgres alias, no password")
            << u"postgres://postgres@localhost:5432/app"_qs << Dialect::PostgreSql << u"postgres"_qs << QString()
            << u"localhost"_qs << 5432 << u"app"_qs << QString() << u"postgresql://postgres@localhost:5432/app"_qs;
        QTest::newRow("postgresql no user")
            << u"postgresql://localhost/app"_qs << Dialect::PostgreSql << QString() << QString() << u"localhost"_qs
            << 5432 << u"app"_qs << QString() << u"postgresql://localhost:5432/app"_qs;
        QTest::newRow("mariadb default port")
            << u"mariadb://root:pw@127.0.0.1/payonce"_qs << Dialect::MariaDb << u"root"_qs << u"pw"_qs
            << u"127.0.0.1"_qs << 3306 << u"payonce"_qs << QString() << u"mariadb://root:***@127.0.0.1:3306/payonce"_qs;
        QTest::newRow("mysql alias") << u"mysql://u:p@h:3307/d"_qs << Dialect::MariaDb << u"u"_qs << u"p"_qs << u"h"_qs
                                     << 3307 << u"d"_qs << QString() << u"mariadb://u:***@h:3307/d"_qs;
        QTest::newRow("percent-encoded password")
            << u"postgresql://payonce:p%40ss%3Aw%2Ford@127.0.0.1:5432/payonce"_qs << Dialect::PostgreSql
            << u"payonce"_qs << u"p@ss:w/ord"_qs << u"127.0.0.1"_qs << 5432 << u"payonce"_qs << QString()
            << u"postgresql://payonce:***@127.0.0.1:5432/payonce"_qs;
        QTest::newRow("raw @ in password")
            << u"mariadb://u:p@ss@h:3306/d"_qs << Dialect::MariaDb << u"u"_qs << u"p@ss"_qs << u"h"_qs << 3306
            << u"d"_qs << QString() << u"mariadb://u:***@h:3306/d"_qs;
        QTest::newRow("utf-8 percent-encoded user")
            << u"postgresql://%E5%BC%A0:pw@h/d"_qs << Dialect::PostgreSql << u"\u5f20"_qs << u"pw"_qs << u"h"_qs << 5432
            << u"d"_qs << QString() << u"postgresql://%E5%BC%A0:***@h:5432/d"_qs;
        QTest::newRow("ipv6 host") << u"postgresql://u:pw@[::1]:5432/payonce"_qs << Dialect::PostgreSql << u"u"_qs
                                   << u"pw"_qs << u"::1"_qs << 5432 << u"payonce"_qs << QString()
                                   << u"postgresql://u:***@[::1]:5432/payonce"_qs;
        QTest::newRow("ipv6 host default port")
            << u"mariadb://u@[fe80::1]/d"_qs << Dialect::MariaDb << u"u"_qs << QString() << u"fe80::1"_qs << 3306
            << u"d"_qs << QString() << u"mariadb://u@[fe80::1]:3306/d"_qs;
        QTest::newRow("upper-case scheme")
            << u"PostgreSQL://u:pw9@h:1/d"_qs << Dialect::PostgreSql << u"u"_qs << u"pw9"_qs << u"h"_qs << 1 << u"d"_qs
            << QString() << u"postgresql://u:***@h:1/d"_qs;
        QTest::newRow("port 65535") << u"postgresql://u:pw9@h:65535/d"_qs << Dialect::PostgreSql << u"u"_qs << u"pw9"_qs
                                    << u"h"_qs << 65535 << u"d"_qs << QString() << u"postgresql://u:***@h:65535/d"_qs;
    }
    void good()
    {
        QFETCH(QString, text);
        auto url = DatabaseUrl::parse(text);
        QVERIFY2(url.ok(), qPrintable(url.ok() ? QString() : url.error().internalMessage));
        QTEST(url->dialect, "dialect");
        QTEST(url->user, "user");
        QTEST(url->password, "password");
        QTEST(url->host, "host");
        QTEST(url->port, "port");
        QTEST(url->database, "database");
        QTEST(url->sqlitePath, "sqlitePath");
        QTEST(url->redacted(), "redacted");
        if (!url->password.isEmpty())
            QVERIFY(!url->redacted().contains(url->password));
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message"); // a part of the one-line error

        QTest::newRow("empty") << QString() << u"it is empty"_qs;
        QTest::newRow("missing scheme") << u"payonce:pw@localhost/payonce"_qs << u"unknown scheme \"payonce\""_qs;
        QTest::newRow("bare path") << u"./payonce.db"_qs << u"the scheme is missing"_qs;
        QTest::newRow("unknown scheme") << u"oracle://u:p@h/d"_qs << u"unknown scheme \"oracle\""_qs;
        QTest::newRow("sqlite without path") << u"sqlite:"_qs << u"sqlite: needs a file path"_qs;
        QTest::newRow("no //") << u"postgresql:u:p@h/d"_qs << u"expected \"postgresql://\""_qs;
        QTest::newRow("bad port 99999") << u"postgresql://u:secretpw@h:99999/d"_qs
                                        << u"port \"99999\" is not a number in 1-65535"_qs;
        QTest::newRow("port 0") << u"mariadb://u:secretpw@h:0/d"_qs << u"port \"0\" is not a number in 1-65535"_qs;
        QTest::newRow("port not a number") << u"mariadb://u:secretpw@h:abc/d"_qs << u"port \"abc\""_qs;
        QTest::newRow("port sign") << u"mariadb://u:secretpw@h:+80/d"_qs << u"port \"+80\""_qs;
        QTest::newRow("empty port") << u"mariadb://u:secretpw@h:/d"_qs << u"port \"\""_qs;
        QTest::newRow("no database") << u"postgresql://host"_qs << u"the database name is missing"_qs;
        QTest::newRow("empty database") << u"postgresql://u:secretpw@host:5432/"_qs
                                        << u"the database name is missing"_qs;
        QTest::newRow("database with slash") << u"postgresql://u:secretpw@host/a/b"_qs << u"must not contain '/'"_qs;
        QTest::newRow("no host") << u"postgresql://u:secretpw@/d"_qs << u"the host is missing"_qs;
        QTest::newRow("empty user") << u"postgresql://:secretpw@h/d"_qs << u"the user name before '@' is empty"_qs;
        QTest::newRow("query string") << u"postgresql://u:secretpw@h/d?sslmode=require"_qs << u"query parameters"_qs;
        QTest::newRow("ipv6 without brackets") << u"postgresql://u:secretpw@::1:5432/d"_qs << u"in brackets"_qs;
        QTest::newRow("ipv6 unclosed") << u"postgresql://u:secretpw@[::1:5432/d"_qs << u"closing ']'"_qs;
    }
    void malformed()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        auto url = DatabaseUrl::parse(text);
        QVERIFY(!url.ok());
        verifyRefusedUrl(url.error(), u"invalid database URL: ", message);
    }

    void redis_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("embedded");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("password");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<int>("database");
        QTest::addColumn<QString>("redacted");

        QTest::newRow("embedded") << u"embedded"_qs << true << QString() << QString() << QString() << 0 << 0
                                  << u"embedded"_qs;
        QTest::newRow("full") << u"redis://:s3cret@127.0.0.1:6380/2"_qs << false << QString() << u"s3cret"_qs
                              << u"127.0.0.1"_qs << 6380 << 2 << u"redis://:***@127.0.0.1:6380/2"_qs;
        QTest::newRow("defaults") << u"redis://localhost"_qs << false << QString() << QString() << u"localhost"_qs
                                  << 6379 << 0 << u"redis://localhost:6379/0"_qs;
        QTest::newRow("trailing slash") << u"redis://localhost:6379/"_qs << false << QString() << QString()
                                        << u"localhost"_qs << 6379 << 0 << u"redis://localhost:6379/0"_qs;
        QTest::newRow("acl user") << u"redis://app:p%40w@h:1/15"_qs << false << u"app"_qs << u"p@w"_qs << u"h"_qs << 1
                                  << 15 << u"redis://app:***@h:1/15"_qs;
        QTest::newRow("ipv6") << u"redis://[::1]:6379/0"_qs << false << QString() << QString() << u"::1"_qs << 6379 << 0
                              << u"redis://[::1]:6379/0"_qs;
    }
    void redis()
    {
        QFETCH(QString, text);
        auto url = RedisUrl::parse(text);
        QVERIFY2(url.ok(), qPrintable(url.ok() ? QString() : url.error().internalMessage));
        QTEST(url->embedded, "embedded");
        QTEST(url->user, "user");
        QTEST(url->password, "password");
        QTEST(url->host, "host");
        QTEST(url->port, "port");
        QTEST(url->database, "database");
        QTEST(url->redacted(), "redacted");
    }

    void redisMalformed_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << QString() << u"it is empty"_qs;
        QTest::newRow("no scheme") << u"localhost:6379"_qs << u"expected \"embedded\""_qs;
        QTest::newRow("tls") << u"rediss://:secretpw@h:6379/0"_qs << u"rediss:// (TLS) is not supported"_qs;
        QTest::newRow("other scheme") << u"http://h:6379"_qs << u"unknown scheme \"http\""_qs;
        QTest::newRow("bad port") << u"redis://:secretpw@h:70000/0"_qs << u"port \"70000\""_qs;
        QTest::newRow("bad db") << u"redis://:secretpw@h:6379/x"_qs << u"database \"x\""_qs;
        QTest::newRow("negative db") << u"redis://:secretpw@h:6379/-1"_qs << u"database \"-1\""_qs;
        QTest::newRow("no host") << u"redis://:secretpw@/0"_qs << u"the host is missing"_qs;
    }
    void redisMalformed()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        auto url = RedisUrl::parse(text);
        QVERIFY(!url.ok());
        verifyRefusedUrl(url.error(), u"invalid Redis URL: ", message);
    }
};

QTEST_GUILESS_MAIN(TestDatabaseUrl)
#include "tst_databaseurl.moc"
