#include "shared/money.h"

#include <QTest>

using namespace payonce;

class TestMoney : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parse_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("fen"); // -1: refused
        QTest::newRow("integer") << QStringLiteral("99") << qint64(9900);
        QTest::newRow("one place") << QStringLiteral("99.5") << qint64(9950);
        QTest::newRow("two places") << QStringLiteral("99.05") << qint64(9905);
        QTest::newRow("one fen") << QStringLiteral("0.01") << qint64(1);
        QTest::newRow("largest") << QStringLiteral("999999999999999.99") << qint64(99999999999999999);
        QTest::newRow("zero") << QStringLiteral("0") << qint64(-1);
        QTest::newRow("zero with places") << QStringLiteral("0.00") << qint64(-1);
        QTest::newRow("negative") << QStringLiteral("-1.00") << qint64(-1);
        QTest::newRow("three places") << QStringLiteral("1.234") << qint64(-1);
        QTest::newRow("exponent") << QStringLiteral("1e3") << qint64(-1);
        QTest::newRow("leading space") << QStringLiteral(" 1") << qint64(-1);
        QTest::newRow("trailing dot") << QStringLiteral("1.") << qint64(-1);
        QTest::newRow("leading dot") << QStringLiteral(".5") << qint64(-1);
        QTest::newRow("empty") << QString() << qint64(-1);
        QTest::newRow("comma") << QStringLiteral("1,00") << qint64(-1);
        QTest::newRow("too many digits") << QStringLiteral("1000000000000000") << qint64(-1);
        QTest::newRow("arabic-indic digit") << QStringLiteral("\u0661") << qint64(-1);
        QTest::newRow("plus sign") << QStringLiteral("+1") << qint64(-1);
    }
    void parse()
    {
        QFETCH(QString, text);
        QFETCH(qint64, fen);
        const auto parsed = parseAmountFen(text);
        if (fen < 0) {
            QVERIFY2(!parsed, qPrintable(QStringLiteral("accepted %1 as %2").arg(text).arg(parsed.value_or(0))));
        } else {
            QVERIFY(parsed);
            QCOMPARE(*parsed, fen);
        }
    }

    void format_data()
    {
        QTest::addColumn<qint64>("fen");
        QTest::addColumn<QString>("text");
        QTest::newRow("whole") << qint64(9900) << QStringLiteral("99.00");
        QTest::newRow("one fen") << qint64(1) << QStringLiteral("0.01");
        QTest::newRow("ten fen") << qint64(10) << QStringLiteral("0.10");
        QTest::newRow("zero") << qint64(0) << QStringLiteral("0.00");
        QTest::newRow("negative (a reversal)") << qint64(-150) << QStringLiteral("-1.50");
    }
    void format()
    {
        QFETCH(qint64, fen);
        QFETCH(QString, text);
        QCOMPARE(formatAmountFen(fen), text);
    }

    void roundTrip()
    {
        for (qint64 fen : {qint64(1), qint64(99), qint64(100), qint64(12345), qint64(99999999999999999)})
            QCOMPARE(parseAmountFen(formatAmountFen(fen)).value_or(-1), fen);
    }
};

QTEST_GUILESS_MAIN(TestMoney)
#include "tst_money.moc"
