#include "core/metrics/latencyhistogram.h"
#include "core/metrics/metricsregistry.h"
#include "core/metrics/prometheustext.h"

#include <QTest>

#include <thread>
#include <vector>

using namespace payonce::core;

class TestMetricsRegistry : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void countersFromManyThreadsSumExactly();
    void histogramBucketsAreCumulative();
    void quantiles_data();
    void quantiles();
    void quantileOfEmptyAndOverflow();
    void labelValuesAreEscaped_data();
    void labelValuesAreEscaped();
    void renderWritesHelpTypeAndSeries();
    void readersRunAtScrape();
    void sameLabelsSameSeries();
    void samplesOfOneFamily();
    void histogramSeriesMerged();
};

void TestMetricsRegistry::countersFromManyThreadsSumExactly()
{
    MetricsRegistry registry;
    constexpr int kThreads = 8;
    constexpr int kPerThread = 100000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&registry, t] {
            // Half the threads look the series up themselves, as a route does on registration.
            Counter &c = registry.counter(QStringLiteral("x_total"), QStringLiteral("x"),
                                          {{QStringLiteral("k"), QStringLiteral("v")}});
            LatencyHistogram &h = registry.histogram(QStringLiteral("d_seconds"), QStringLiteral("d"));
            for (int i = 0; i < kPerThread; ++i) {
                c.add();
                if (t % 2 == 0)
                    h.observe(std::chrono::milliseconds(3));
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    QCOMPARE(
        registry.counter(QStringLiteral("x_total"), QStringLiteral("x"), {{QStringLiteral("k"), QStringLiteral("v")}})
            .value(),
        quint64(kThreads) * kPerThread);
    const auto s = registry.histogram(QStringLiteral("d_seconds"), QStringLiteral("d")).snapshot();
    QCOMPARE(s.count, quint64(kThreads / 2) * kPerThread);
    // 3 ms exactly, summed in whole nanoseconds: no drift.
    QCOMPARE(s.sumSeconds, double(quint64(kThreads / 2) * kPerThread * 3000000ULL) / 1e9);
    const QByteArray text = registry.render();
    QVERIFY2(text.contains("x_total{k=\"v\"} 800000\n"), text.constData());
}

void TestMetricsRegistry::histogramBucketsAreCumulative()
{
    LatencyHistogram h({0.01, 0.1, 1.0});
    h.observeSeconds(0.005);
    h.observeSeconds(0.01); // le is inclusive
    h.observeSeconds(0.05);
    h.observeSeconds(0.5);
    h.observeSeconds(0.5);
    h.observeSeconds(7.0);
    const auto s = h.snapshot();
    QCOMPARE(s.cumulative, (QList<quint64>{2, 3, 5, 6}));
    QCOMPARE(s.count, quint64(6));
    QVERIFY(qAbs(s.sumSeconds - 8.065) < 1e-9);

    MetricsRegistry registry;
    LatencyHistogram &r = registry.histogram(QStringLiteral("req_seconds"), QStringLiteral("latency"),
                                             {{QStringLiteral("endpoint"), QStringLiteral("/a")}}, {0.01, 0.1, 1.0});
    r.observeSeconds(0.05);
    r.observeSeconds(2.0);
    const QByteArray text = registry.render();
    QVERIFY2(text.contains("# TYPE req_seconds histogram\n"), text.constData());
    QVERIFY2(text.contains("req_seconds_bucket{endpoint=\"/a\",le=\"0.01\"} 0\n"), text.constData());
    QVERIFY2(text.contains("req_seconds_bucket{endpoint=\"/a\",le=\"0.1\"} 1\n"), text.constData());
    QVERIFY2(text.contains("req_seconds_bucket{endpoint=\"/a\",le=\"1\"} 1\n"), text.constData());
    QVERIFY2(text.contains("req_seconds_bucket{endpoint=\"/a\",le=\"+Inf\"} 2\n"), text.constData());
    QVERIFY2(text.contains("req_seconds_sum{endpoint=\"/a\"} 2.05\n"), text.constData());
    QVERIFY2(text.contains("req_seconds_count{endpoint=\"/a\"} 2\n"), text.constData());
}

void TestMetricsRegistry::quantiles_data()
{
    QTest::addColumn<QList<double>>("observations");
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("expected");
    // Bounds 0.01, 0.1, 1 (below). 100 observations all in (0.01, 0.1]: linear inside.
    QList<double> uniform(100, 0.05);
    QTest::newRow("p50 inside one bucket") << uniform << 0.5 << (0.01 + 0.09 * 0.5);
    QTest::newRow("p99 inside one bucket") << uniform << 0.99 << (0.01 + 0.09 * 0.99);
    // 90 fast (first bucket, interpolated from 0), 10 slow (third bucket).
    QList<double> mixed(90, 0.002);
    mixed += QList<double>(10, 0.5);
    QTest::newRow("p50 in the first bucket") << mixed << 0.5 << (0.01 * 50.0 / 90.0);
    QTest::newRow("p90 at a bucket edge") << mixed << 0.9 << 0.01;
    QTest::newRow("p99 in the slow bucket") << mixed << 0.99 << (0.1 + 0.9 * 9.0 / 10.0);
}

void TestMetricsRegistry::quantiles()
{
    QFETCH(QList<double>, observations);
    QFETCH(double, q);
    QFETCH(double, expected);
    LatencyHistogram h({0.01, 0.1, 1.0});
    for (double seconds : observations)
        h.observeSeconds(seconds);
    QVERIFY2(qAbs(h.quantile(q) - expected) < 1e-12,
             qPrintable(QStringLiteral("got %1, want %2").arg(h.quantile(q)).arg(expected)));
}

void TestMetricsRegistry::quantileOfEmptyAndOverflow()
{
    LatencyHistogram h({0.01, 0.1});
    QCOMPARE(h.quantile(0.99), 0.0);
    h.observeSeconds(30.0);
    // Past the last finite bound: the highest bound, as histogram_quantile() answers.
    QCOMPARE(h.quantile(0.5), 0.1);
}

void TestMetricsRegistry::labelValuesAreEscaped_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<QByteArray>("escaped");
    QTest::newRow("plain") << QStringLiteral("gateway.wechat") << QByteArray("gateway.wechat");
    QTest::newRow("quote") << QStringLiteral("a\"b") << QByteArray("a\\\"b");
    QTest::newRow("backslash") << QStringLiteral("a\\b") << QByteArray("a\\\\b");
    QTest::newRow("newline") << QStringLiteral("a\nb") << QByteArray("a\\nb");
    QTest::newRow("all") << QStringLiteral("\\\"\n") << QByteArray("\\\\\\\"\\n");
    QTest::newRow("utf-8") << QStringLiteral("支付") << QStringLiteral("支付").toUtf8();
}

void TestMetricsRegistry::labelValuesAreEscaped()
{
    QFETCH(QString, value);
    QFETCH(QByteArray, escaped);
    QCOMPARE(prometheus::escapeLabelValue(value), escaped);
    MetricsRegistry registry;
    registry.counter(QStringLiteral("e_total"), QStringLiteral("e"), {{QStringLiteral("name"), value}}).add(2);
    const QByteArray text = registry.render();
    QVERIFY2(text.contains(QByteArray("e_total{name=\"" + escaped + "\"} 2\n")), text.constData());
}

void TestMetricsRegistry::renderWritesHelpTypeAndSeries()
{
    MetricsRegistry registry;
    registry.counter(QStringLiteral("a_total"), QStringLiteral("first\nline \\ two")).add(5);
    registry.addReader(QStringLiteral("b"), QStringLiteral("a gauge"), MetricType::Gauge, [] {
        return QList<MetricSample>{{{}, 0.25}};
    });
    const QByteArray expected = "# HELP a_total first\\nline \\\\ two\n"
                                "# TYPE a_total counter\n"
                                "a_total 5\n"
                                "# HELP b a gauge\n"
                                "# TYPE b gauge\n"
                                "b 0.25\n";
    QCOMPARE(registry.render(), expected);
    QCOMPARE(prometheus::formatValue(qInf()), QByteArray("+Inf"));
    QCOMPARE(prometheus::formatValue(0.005), QByteArray("0.005"));
    QCOMPARE(prometheus::formatValue(12345678901.0), QByteArray("12345678901"));
}

void TestMetricsRegistry::readersRunAtScrape()
{
    MetricsRegistry registry;
    int value = 1;
    int calls = 0;
    registry.addReader(QStringLiteral("g"), QStringLiteral("g"), MetricType::Gauge, [&] {
        ++calls;
        return QList<MetricSample>{{{{QStringLiteral("status"), QStringLiteral("open")}}, double(value)}};
    });
    QVERIFY(registry.render().contains("g{status=\"open\"} 1\n"));
    value = 7;
    QVERIFY(registry.render().contains("g{status=\"open\"} 7\n"));
    QCOMPARE(calls, 2);
}

void TestMetricsRegistry::sameLabelsSameSeries()
{
    MetricsRegistry registry;
    Counter &a = registry.counter(QStringLiteral("r_total"), QStringLiteral("r"),
                                  {{QStringLiteral("o"), QStringLiteral("2xx")}});
    Counter &b = registry.counter(QStringLiteral("r_total"), QStringLiteral("r"),
                                  {{QStringLiteral("o"), QStringLiteral("2xx")}});
    Counter &c = registry.counter(QStringLiteral("r_total"), QStringLiteral("r"),
                                  {{QStringLiteral("o"), QStringLiteral("5xx")}});
    QCOMPARE(&a, &b);
    QVERIFY(&a != &c);
    a.add();
    c.add(3);
    const QByteArray text = registry.render();
    QCOMPARE(text.count("# TYPE r_total counter"), 1);
    QVERIFY(text.contains("r_total{o=\"2xx\"} 1\n"));
    QVERIFY(text.contains("r_total{o=\"5xx\"} 3\n"));
}

void TestMetricsRegistry::samplesOfOneFamily()
{
    MetricsRegistry registry;
    registry.counter(QStringLiteral("r_total"), QStringLiteral("r"), {{QStringLiteral("o"), QStringLiteral("2xx")}})
        .add(3);
    registry.counter(QStringLiteral("r_total"), QStringLiteral("r"), {{QStringLiteral("o"), QStringLiteral("5xx")}})
        .add(2);
    int otherCalls = 0;
    registry.addReader(QStringLiteral("other"), QStringLiteral("o"), MetricType::Gauge, [&] {
        ++otherCalls;
        return QList<MetricSample>{};
    });
    registry.addReader(QStringLiteral("g"), QStringLiteral("g"), MetricType::Gauge, [] {
        return QList<MetricSample>{{{}, 4.0}};
    });
    const QList<MetricSample> counters = registry.samples(QStringLiteral("r_total"));
    QCOMPARE(counters.size(), 2);
    QCOMPARE(counters.at(0).value + counters.at(1).value, 5.0);
    const QList<MetricSample> gauge = registry.samples(QStringLiteral("g"));
    QCOMPARE(gauge.size(), 1);
    QCOMPARE(gauge.at(0).value, 4.0);
    QVERIFY(registry.samples(QStringLiteral("nope")).isEmpty());
    QCOMPARE(otherCalls, 0); // only the family asked for is read
}

void TestMetricsRegistry::histogramSeriesMerged()
{
    MetricsRegistry registry;
    QVERIFY(!registry.histogramSnapshot(QStringLiteral("d")));
    LatencyHistogram &a = registry.histogram(QStringLiteral("d"), QStringLiteral("d"),
                                             {{QStringLiteral("e"), QStringLiteral("a")}});
    LatencyHistogram &b = registry.histogram(QStringLiteral("d"), QStringLiteral("d"),
                                             {{QStringLiteral("e"), QStringLiteral("b")}});
    for (int i = 0; i < 98; ++i)
        a.observeSeconds(0.002);
    b.observeSeconds(5.0);
    b.observeSeconds(5.0);
    const auto merged = registry.histogramSnapshot(QStringLiteral("d"));
    QVERIFY(merged);
    QCOMPARE(merged->count, quint64(100));
    QVERIFY(LatencyHistogram::quantile(*merged, 0.5) <= 0.005);
    QVERIFY(LatencyHistogram::quantile(*merged, 0.995) > 2.5);
}

QTEST_GUILESS_MAIN(TestMetricsRegistry)
#include "tst_metricsregistry.moc"
