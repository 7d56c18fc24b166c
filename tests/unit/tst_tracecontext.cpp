// W3C traceparent parsing and propagation (shared/tracecontext.h): well-formed headers
// are read field by field, every malformed one is refused (the caller starts a new trace),
// children keep the trace and get a fresh span id, stored trace ids become a header.

#include "shared/tracecontext.h"

#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace payonce;

class TestTraceContext : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesWellFormedHeaders_data()
    {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("traceId");
        QTest::addColumn<QString>("parentId");
        QTest::addColumn<QString>("flags");
        QTest::newRow("sampled") << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                                 << QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736")
                                 << QStringLiteral("00f067aa0ba902b7") << QStringLiteral("01");
        QTest::newRow("not sampled") << QByteArray("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
                                     << QStringLiteral("0af7651916cd43dd8448eb211c80319c")
                                     << QStringLiteral("b7ad6b7169203331") << QStringLiteral("00");
        QTest::newRow("surrounding blanks") << QByteArray(" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ")
                                            << QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736")
                                            << QStringLiteral("00f067aa0ba902b7") << QStringLiteral("01");
        QTest::newRow("later version with more fields")
            << QByteArray("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever")
            << QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736") << QStringLiteral("00f067aa0ba902b7")
            << QStringLiteral("01");
    }
    void parsesWellFormedHeaders()
    {
        QFETCH(QByteArray, header);
        QFETCH(QString, traceId);
        QFETCH(QString, parentId);
        QFETCH(QString, flags);
        const auto trace = TraceContext::parse(header);
        QVERIFY(trace);
        QCOMPARE(trace->traceId, traceId);
        QCOMPARE(trace->parentId, parentId);
        QCOMPARE(trace->flags, flags);
    }

    void refusesMalformedHeaders_data()
    {
        QTest::addColumn<QByteArray>("header");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("garbage") << QByteArray("not-a-trace-header");
        QTest::newRow("three fields") << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7");
        QTest::newRow("upper case") << QByteArray("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01");
        QTest::newRow("zero trace id") << QByteArray("00-00000000000000000000000000000000-00f067aa0ba902b7-01");
        QTest::newRow("zero parent id") << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01");
        QTest::newRow("short trace id") << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01");
        QTest::newRow("long parent id") << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7aa-01");
        QTest::newRow("version ff") << QByteArray("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        QTest::newRow("version not hex") << QByteArray("0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        QTest::newRow("00 with a fifth field")
            << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x");
        QTest::newRow("flags not hex") << QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g");
    }
    void refusesMalformedHeaders()
    {
        QFETCH(QByteArray, header);
        QVERIFY(!TraceContext::parse(header));
    }

    void freshAndChildContexts()
    {
        const QRegularExpression traceId(QStringLiteral("^[0-9a-f]{32}$"));
        const QRegularExpression spanId(QStringLiteral("^[0-9a-f]{16}$"));
        QSet<QString> seen;
        for (int i = 0; i < 100; ++i) {
            const TraceContext fresh = TraceContext::fresh();
            QVERIFY(traceId.match(fresh.traceId).hasMatch());
            QVERIFY(spanId.match(fresh.parentId).hasMatch());
            seen.insert(fresh.traceId);
            const TraceContext child = fresh.child();
            QCOMPARE(child.traceId, fresh.traceId);
            QCOMPARE(child.flags, fresh.flags);
            QVERIFY(child.parentId != fresh.parentId);
            // What is sent parses back to itself.
            const auto again = TraceContext::parse(child.header());
            QVERIFY(again);
            QCOMPARE(again->header(), child.header());
        }
        QCOMPARE(seen.size(), 100);
    }

    void traceParentForAStoredTraceId()
    {
        const auto header = TraceContext::parse(traceParentFor(QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736")));
        QVERIFY(header);
        QCOMPARE(header->traceId, QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736"));
        QCOMPARE(header->flags, QStringLiteral("01"));
        QVERIFY(traceParentFor(QString()).isEmpty());
        QVERIFY(traceParentFor(QStringLiteral("trace-1")).isEmpty());
        QVERIFY(traceParentFor(QStringLiteral("00000000000000000000000000000000")).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestTraceContext)
#include "tst_tracecontext.moc"
