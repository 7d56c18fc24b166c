#include "logging/categories.h"
#include "logging/logging.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QTest>
#include <QThread>

using namespace payonce;
using namespace payonce::logging;

namespace {

const QDateTime kTs = QDateTime(QDate(2026, 11, 29), QTime(10, 0, 0, 123), Qt::UTC);

} // namespace

class TestLogging : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cleanup() { uninstall(); }

    void textIsTheDocumentedForm()
    {
        QCOMPARE(formatLine(Format::Text, QtInfoMsg, u"payonce.agent.sql", u"message"_qs, kTs),
                 QByteArray("2026-11-29T10:00:00.123Z info payonce.agent.sql: message\n"));
        QCOMPARE(formatLine(Format::Text, QtWarningMsg, u"payonce.agent.app", u"m"_qs, kTs,
                            QJsonObject{{u"instance"_qs, u"host-1"_qs}, {u"n"_qs, 3}}),
                 QByteArray("2026-11-29T10:00:00.123Z warning payonce.agent.app: m instance=host-1 n=3\n"));
    }

    // Whatever the message holds, the text form is exactly one line.
    void textIsOneLinePerMessage_data()
    {
        QTest::addColumn<QString>("message");
        QTest::newRow("plain") << u"hello"_qs;
        QTest::newRow("newline") << u"first\nsecond"_qs;
        QTest::newRow("crlf") << u"a\r\nb\r\n"_qs;
        QTest::newRow("control") << u"bell\u0007 vt\u000b"_qs;
        QTest::newRow("empty") << QString();
    }
    void textIsOneLinePerMessage()
    {
        QFETCH(QString, message);
        const QByteArray line = formatLine(Format::Text, QtDebugMsg, u"payonce.agent.core", message, kTs,
                                           QJsonObject{{u"field"_qs, u"x\ny"_qs}});
        QVERIFY(line.endsWith('\n'));
        QCOMPARE(line.count('\n'), 1);
        QVERIFY(!line.contains('\r'));
    }

    void jsonLinesParse_data()
    {
        QTest::addColumn<QString>("message");
        QTest::newRow("plain") << u"hello"_qs;
        QTest::newRow("quotes") << uR"(he said "pay" and 'go')"_qs;
        QTest::newRow("newlines") << u"line1\nline2\r\nline3"_qs;
        QTest::newRow("backslash") << uR"(C:\path\n not a newline)"_qs;
        QTest::newRow("controls") << u"tab\t nul-ish \u0001 del \u007f"_qs;
        QTest::newRow("unicode") << u"\u8ba2\u5355 ORD001 \u2028 \U0001F4B0"_qs;
        QTest::newRow("looks like json") << uR"({"msg":"injected"})"_qs;
    }
    void jsonLinesParse()
    {
        QFETCH(QString, message);
        const QJsonObject fields{{u"order_no"_qs, u"ORD\"1\n"_qs},
                                 {u"attempt"_qs, 2},
                                 {u"ok"_qs, true},
                                 {u"msg"_qs, u"must not override"_qs}};
        const QByteArray line = formatLine(Format::Json, QtWarningMsg, u"payonce.agent.http", message, kTs, fields);
        QVERIFY(line.endsWith('\n'));
        QCOMPARE(line.count('\n'), 1);
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
        QVERIFY2(error.error == QJsonParseError::NoError,
                 qPrintable(error.errorString() + u": "_qs + QString::fromUtf8(line)));
        const QJsonObject o = doc.object();
        QCOMPARE(o.value(u"ts").toString(), u"2026-11-29T10:00:00.123Z"_qs);
        QCOMPARE(o.value(u"level").toString(), u"warning"_qs);
        QCOMPARE(o.value(u"category").toString(), u"payonce.agent.http"_qs);
        QCOMPARE(o.value(u"msg").toString(), message);
        QCOMPARE(o.value(u"order_no").toString(), u"ORD\"1\n"_qs);
        QCOMPARE(o.value(u"attempt").toInt(), 2);
        QCOMPARE(o.value(u"ok").toBool(), true);
        const QByteArray prefix =
            R"({"ts":"2026-11-29T10:00:00.123Z","level":"warning","category":"payonce.agent.http","msg":)";
        QVERIFY(line.startsWith(prefix));
    }

    void scopedFieldsNestAndEnd()
    {
        {
            ScopedFields outer(QJsonObject{{u"request_id"_qs, u"r1"_qs}, {u"order_no"_qs, u"A"_qs}});
            {
                ScopedFields inner(QJsonObject{{u"order_no"_qs, u"B"_qs}});
                const QJsonObject o =
                    QJsonDocument::fromJson(formatLine(Format::Json, QtInfoMsg, u"c", u"m"_qs, kTs)).object();
                QCOMPARE(o.value(u"request_id").toString(), u"r1"_qs);
                QCOMPARE(o.value(u"order_no").toString(), u"B"_qs);
            }
            const QJsonObject o =
                QJsonDocument::fromJson(formatLine(Format::Json, QtInfoMsg, u"c", u"m"_qs, kTs)).object();
            QCOMPARE(o.value(u"order_no").toString(), u"A"_qs);
        }
        const QJsonObject o = QJsonDocument::fromJson(formatLine(Format::Json, QtInfoMsg, u"c", u"m"_qs, kTs)).object();
        QVERIFY(!o.contains(u"request_id"));
    }

    void names()
    {
        QCOMPARE(formatFromName(u"json"), std::optional<Format>(Format::Json));
        QCOMPARE(formatFromName(u"text"), std::optional<Format>(Format::Text));
        QVERIFY(!formatFromName(u"xml"));
        QCOMPARE(levelFromName(u"warning"), std::optional<Level>(Level::Warning));
        QVERIFY(!levelFromName(u"trace"));
        QCOMPARE(levelName(QtCriticalMsg), u"critical"_qs);
    }

    // Through Qt's logging: the handler, the sink, the level filter, the categories.
    void installedHandlerFiltersByLevel_data()
    {
        QTest::addColumn<Level>("level");
        QTest::addColumn<QStringList>("expected"); // levels of the lines that come out
        QTest::newRow("debug") << Level::Debug << QStringList{u"debug"_qs, u"info"_qs, u"warning"_qs};
        QTest::newRow("info") << Level::Info << QStringList{u"info"_qs, u"warning"_qs};
        QTest::newRow("warning") << Level::Warning << QStringList{u"warning"_qs};
    }
    void installedHandlerFiltersByLevel()
    {
        QFETCH(Level, level);
        QList<QByteArray> lines;
        install(Options{Format::Json, level, QJsonObject{{u"instance"_qs, u"test-1"_qs}},
                        [&lines](const QByteArray &line) { lines.append(line); }});
        qCDebug(lcSql) << "debug line";
        qCInfo(lcSql) << "info line";
        qCWarning(lcSql) << "warning \"quoted\"\nsecond line";
        QStringList levels;
        for (const QByteArray &line : lines) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QCOMPARE(o.value(u"category").toString(), u"payonce.agent.sql"_qs);
            QCOMPARE(o.value(u"instance").toString(), u"test-1"_qs);
            levels << o.value(u"level").toString();
        }
        QTEST(levels, "expected");
    }

    void linesFromThreadsDoNotInterleave()
    {
        QList<QByteArray> lines;
        install(Options{Format::Text, Level::Info, {}, [&lines](const QByteArray &line) { lines.append(line); }});
        QList<QThread *> threads;
        for (int t = 0; t < 4; ++t) {
            threads << QThread::create([t] {
                for (int i = 0; i < 200; ++i)
                    qCInfo(lcCore, "thread %d message %d with some padding to make the line longer", t, i);
            });
            threads.last()->start();
        }
        for (QThread *thread : threads) {
            QVERIFY(thread->wait(30000));
            delete thread;
        }
        QCOMPARE(lines.size(), 800);
        for (const QByteArray &line : lines) {
            QCOMPARE(line.count('\n'), 1);
            QVERIFY(line.contains(" info payonce.agent.core: thread "));
        }
    }

    void categoryNames()
    {
        QCOMPARE(QLatin1String(lcConfig().categoryName()), QLatin1String("payonce.agent.config"));
        QCOMPARE(QLatin1String(lcSql().categoryName()), QLatin1String("payonce.agent.sql"));
        QCOMPARE(QLatin1String(lcRedis().categoryName()), QLatin1String("payonce.agent.redis"));
        QCOMPARE(QLatin1String(lcHttp().categoryName()), QLatin1String("payonce.agent.http"));
        QCOMPARE(QLatin1String(lcCore().categoryName()), QLatin1String("payonce.agent.core"));
        QCOMPARE(QLatin1String(lcApp().categoryName()), QLatin1String("payonce.agent.app"));
    }
};

QTEST_GUILESS_MAIN(TestLogging)
#include "tst_logging.moc"
