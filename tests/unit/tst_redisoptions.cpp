#include "redis/boundedseenset.h"
#include "redis/redisoptions.h"

#include <QTest>

using namespace payonce;
using namespace std::chrono_literals;

class TestRedisOptions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parse_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("password");
        QTest::addColumn<int>("database");
        QTest::newRow("plain") << QStringLiteral("redis://127.0.0.1:6380/0") << true << QStringLiteral("127.0.0.1")
                               << 6380 << QString() << 0;
        QTest::newRow("default port, no db")
            << QStringLiteral("redis://cache.local") << true << QStringLiteral("cache.local") << 6379 << QString() << 0;
        QTest::newRow("password") << QStringLiteral("redis://:s3cret@127.0.0.1:7000/2") << true
                                  << QStringLiteral("127.0.0.1") << 7000 << QStringLiteral("s3cret") << 2;
        QTest::newRow("encoded password") << QStringLiteral("redis://:p%40ss%2Fword@h:1/3") << true
                                          << QStringLiteral("h") << 1 << QStringLiteral("p@ss/word") << 3;
        QTest::newRow("tls") << QStringLiteral("rediss://h:1/0") << false << QString() << 0 << QString() << 0;
        QTest::newRow("other scheme") << QStringLiteral("http://h:1/0") << false << QString() << 0 << QString() << 0;
        QTest::newRow("bad db") << QStringLiteral("redis://h:1/zero") << false << QString() << 0 << QString() << 0;
        QTest::newRow("negative db") << QStringLiteral("redis://h:1/-1") << false << QString() << 0 << QString() << 0;
        QTest::newRow("no host") << QStringLiteral("redis://:1/0") << false << QString() << 0 << QString() << 0;
        QTest::newRow("user without password")
            << QStringLiteral("redis://bob@h:1/0") << false << QString() << 0 << QString() << 0;
        QTest::newRow("embedded is not a url")
            << QStringLiteral("embedded") << false << QString() << 0 << QString() << 0;
    }
    void parse()
    {
        QFETCH(QString, url);
        QFETCH(bool, ok);
        const auto parsed = redis::RedisOptions::fromUrl(url);
        QCOMPARE(parsed.ok(), ok);
        if (!ok) {
            QCOMPARE(parsed.error().code, core::ErrorCode::Misconfigured);
            QVERIFY(!parsed.error().internalMessage.isEmpty());
            return;
        }
        QTEST(parsed->host, "host");
        QTEST(parsed->port, "port");
        QTEST(parsed->password, "password");
        QTEST(parsed->database, "database");
        QVERIFY(!parsed->endpoint().contains(parsed->password.isEmpty() ? QStringLiteral("\x01") : parsed->password));
    }

    void boundedSeenSetKeepsAtMostCapacity()
    {
        redis::BoundedSeenSet set(3, 1h);
        for (const char *item : {"a", "b", "c", "d"})
            set.insert(QLatin1String(item));
        QCOMPARE(set.size(), 3);
        QVERIFY(!set.contains(QStringLiteral("a"))); // the oldest went first
        QVERIFY(set.contains(QStringLiteral("d")));
        set.insert(QStringLiteral("b")); // marked again: most recent now
        set.insert(QStringLiteral("e"));
        QVERIFY(set.contains(QStringLiteral("b")));
        QVERIFY(!set.contains(QStringLiteral("c")));
    }

    void boundedSeenSetExpires()
    {
        redis::BoundedSeenSet set(10, 50ms);
        set.insert(QStringLiteral("x"));
        QTest::qSleep(200);
        QVERIFY(!set.contains(QStringLiteral("x")));
        QCOMPARE(set.size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestRedisOptions)
#include "tst_redisoptions.moc"
