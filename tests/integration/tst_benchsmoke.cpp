// payonce-bench end to end, small: on SQLite with a redis-server key store and the slow
// stream client, 200 operations per phase on 8 connections. Proves the benchmark runs
// every phase without an error and prints a table that parses with every figure
// positive; and, with a small --preload-deliveries, that the history is written, measured
// against and its aged day pruned; and that the memory storm (scripts/bench-memory.sh)
// runs, with its re-sent copies answered from memory; and that an agent dying mid-phase is
// named as the cause and ends the run. Speeds are never asserted (machines are noisy): only
// that they were measured.

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

namespace {

/// The table's data rows (not the header, not the separator), split into trimmed cells.
QList<QStringList> tableRows(const QString &output)
{
    QList<QStringList> rows;
    for (const QString &line : output.split(u'\n')) {
        if (!line.startsWith(u'|') || line.startsWith(u"| phase") || line.startsWith(u"|---"))
            continue;
        QStringList cells = line.split(u'|');
        cells.removeFirst();
        cells.removeLast();
        for (QString &c : cells)
            c = c.trimmed();
        rows << cells;
    }
    return rows;
}

/// What one payonce-bench run printed and wrote.
struct BenchOutput {
    QString output;      ///< stdout: the table and the targets
    QString diagnostics; ///< stdout and stderr, for a failure's message
    QJsonObject json;    ///< --json
};

/// Runs payonce-bench with `arguments` (plus --json) to its end; a run that does not end
/// in four minutes, exits non-zero or reports an error fails the calling test.
void runBench(const QStringList &arguments, BenchOutput *out)
{
    QTemporaryDir dir;
    const QString jsonPath = dir.filePath(QStringLiteral("bench.json"));
    QProcess bench;
    bench.setProcessChannelMode(QProcess::SeparateChannels);
    bench.start(QStringLiteral(PAYONCE_BENCH_PATH), arguments + QStringList{QStringLiteral("--json"), jsonPath});
    QVERIFY(bench.waitForFinished(240000));
    out->output = QString::fromUtf8(bench.readAllStandardOutput());
    out->diagnostics = out->output + QString::fromUtf8(bench.readAllStandardError());
    QVERIFY2(bench.exitStatus() == QProcess::NormalExit && bench.exitCode() == 0, qPrintable(out->diagnostics));
    QVERIFY2(out->output.contains(u"\nOK: 0 errors"), qPrintable(out->diagnostics));
    QFile jsonFile(jsonPath);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    out->json = QJsonDocument::fromJson(jsonFile.readAll()).object();
}

/// The pid of a child of `parent` (forked by any of its threads) whose name is `name`; 0 if
/// there is none.
qint64 childNamed(qint64 parent, const QByteArray &name)
{
    const QString tasks = QStringLiteral("/proc/%1/task").arg(parent);
    for (const QString &task : QDir(tasks).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile children(tasks + u'/' + task + QStringLiteral("/children"));
        if (!children.open(QIODevice::ReadOnly))
            continue;
        for (const QByteArray &pid : children.readAll().split(' ')) {
            QFile comm(QStringLiteral("/proc/%1/comm").arg(QString::fromLatin1(pid.trimmed())));
            if (!pid.trimmed().isEmpty() && comm.open(QIODevice::ReadOnly) && comm.readAll().trimmed() == name)
                return pid.trimmed().toLongLong();
        }
    }
    return 0;
}

} // namespace

class TestBenchSmoke : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyPhaseRunsWithoutErrors();
    void historyIsPreloadedAndTheAgedDayPruned();
    void memoryStormResendsCopiesAndSamplesTheAgent();
    void agentDyingMidPhaseIsNamedAndEndsTheRun();
};

void TestBenchSmoke::everyPhaseRunsWithoutErrors()
{
    BenchOutput run;
    runBench({QStringLiteral("--db"), QStringLiteral("sqlite"), QStringLiteral("--redis"), QStringLiteral("server"),
              QStringLiteral("--connections"), QStringLiteral("8"), QStringLiteral("--requests"), QStringLiteral("200"),
              QStringLiteral("--skus"), QStringLiteral("4"), QStringLiteral("--slow-stream-client")},
             &run);
    if (QTest::currentTestFailed())
        return;
    const QString &output = run.output;

    // Every phase, each once, in the order the benchmark runs them.
    const QList<QStringList> rows = tableRows(output);
    QStringList phases;
    for (const QStringList &row : rows)
        phases << row.value(0);
    QCOMPARE(phases,
             (QStringList{
                 QStringLiteral("create orders (preparation)"), QStringLiteral("(c) confirms (token + confirm)"),
                 QStringLiteral("(a) unique callbacks"), QStringLiteral("(a') unique callbacks, slow stream client"),
                 QStringLiteral("(b) duplicate callbacks"), QStringLiteral("limit: GET /healthz"),
                 QStringLiteral("diagnostic: agent's callback SQL, direct, 8 threads"),
                 QStringLiteral("diagnostic: agent's callback SQL, direct, 8 threads"),
                 QStringLiteral("floor: paid transaction by hand, 8 threads"),
                 QStringLiteral("floor: paid transaction by hand, 8 threads"), QStringLiteral("limit: Redis PING")}));
    // Not measured over the agent: the limits, the diagnostic and the floor.
    auto besideTheAgent = [](const QString &phase) {
        return phase.startsWith(u"limit:") || phase.startsWith(u"diagnostic:") || phase.startsWith(u"floor:");
    };
    for (const QStringList &row : rows) {
        QCOMPARE(row.size(), 14);
        // ops, seconds, ops/s, p50, p99, max: measured, so positive; errors: none.
        for (int column = 1; column <= 6; ++column) {
            bool ok = false;
            const double value = row[column].toDouble(&ok);
            QVERIFY2(ok && value > 0, qPrintable(row.join(u" | ")));
        }
        QCOMPARE(row[7], QStringLiteral("0"));
        // HTTP phases count their requests, and every one was answered; SQL and Redis send none.
        const bool overHttp = !row[0].startsWith(u"diagnostic:") && !row[0].startsWith(u"floor:")
                              && row[0] != u"limit: Redis PING";
        if (overHttp) {
            QVERIFY2(row[8].toLongLong() >= row[1].toLongLong(), qPrintable(row.join(u" | ")));
            QCOMPARE(row[9], QStringLiteral("0"));
        } else {
            QCOMPARE(row[8], QStringLiteral("-"));
            QCOMPARE(row[9], QStringLiteral("-"));
        }
        QVERIFY2(row[10].endsWith(u'%') && row[10].chopped(1).toDouble() > 0, qPrintable(row.join(u" | ")));
        // The agent's CPU moves in 10 ms ticks: positive over the agent phases (seconds
        // long), possibly 0 over a limit phase that took a few milliseconds.
        if (!besideTheAgent(row[0]))
            QVERIFY2(row[11].endsWith(u'%') && row[11].chopped(1).toDouble() > 0, qPrintable(row.join(u" | ")));
        // SQLite runs inside the agent: no database server whose CPU a phase could show.
        QCOMPARE(row[12], QStringLiteral("-"));
        // The agent figures are ratios of their limits; the preparation is none.
        if (row[0] == u"create orders (preparation)")
            QCOMPARE(row[13], QStringLiteral("-"));
        else if (!besideTheAgent(row[0]))
            QVERIFY2(row[13].contains(u"% of ") && row[13].section(u'%', 0, 0).toDouble() > 0,
                     qPrintable(row.join(u" | ")));
    }
    // 400 orders created and 400 confirms (twice the count: the slow-stream comparison
    // pays twice), then 200 + 200 unique callbacks, each paying its own order; the direct
    // SQL and the floor each repeat those 400 (at 8 connections, then at the agent's 8
    // worker threads); 200 of each of the others.
    QCOMPARE(rows[0][1], QStringLiteral("400"));
    QCOMPARE(rows[1][1], QStringLiteral("400"));
    QCOMPARE(rows[2][1], QStringLiteral("200"));
    QCOMPARE(rows[3][1], QStringLiteral("200"));
    QCOMPARE(rows[4][1], QStringLiteral("200"));
    QCOMPARE(rows[5][1], QStringLiteral("200"));
    QCOMPARE(rows[6][1], QStringLiteral("400"));
    QCOMPARE(rows[7][1], QStringLiteral("400"));
    QCOMPARE(rows[8][1], QStringLiteral("400"));
    QCOMPARE(rows[9][1], QStringLiteral("400"));
    QCOMPARE(rows[10][1], QStringLiteral("200"));
    // The unique callbacks are a ratio of the floor.
    QVERIFY2(rows[2][13].contains(u"% of floor_paid"), qPrintable(rows[2].join(u" | ")));
    QVERIFY2(output.contains(u"unique callbacks >= 60% of the floor (4 SKUs)"), qPrintable(output));
    QVERIFY2(output.contains(u"unique callbacks p99 <= 50 ms"), qPrintable(output));
    QVERIFY2(output.contains(u"duplicates p99 <= 10 ms"), qPrintable(output));

    // The JSON says the same, and carries the slow-stream comparison.
    const QJsonObject &json = run.json;
    QCOMPARE(json.value(QStringLiteral("errors")).toInt(-1), 0);
    QCOMPARE(json.value(QStringLiteral("dropped")).toInt(-1), 0);
    QCOMPARE(json.value(QStringLiteral("phases")).toArray().size(), rows.size());
    const QJsonObject slow = json.value(QStringLiteral("slow_stream")).toObject();
    for (const char *key : {"rate_without", "rate_with", "rss_before_kib", "rss_after_kib"})
        QVERIFY2(slow.value(QLatin1String(key)).toDouble() > 0, key);
    for (const char *key : {"coalesced_total", "dropped_total"})
        QVERIFY2(slow.value(QLatin1String(key)).toDouble(-1) >= 0, key);
}

// --preload-deliveries: the history is written (the tables hold it afterwards), the
// callback phases run again against it, and the agent's own pruner deletes the whole day
// of deliveries past retention while duplicates run.
void TestBenchSmoke::historyIsPreloadedAndTheAgedDayPruned()
{
    BenchOutput run;
    runBench({QStringLiteral("--db"), QStringLiteral("sqlite"), QStringLiteral("--connections"), QStringLiteral("8"),
              QStringLiteral("--requests"), QStringLiteral("100"), QStringLiteral("--skus"), QStringLiteral("4"),
              QStringLiteral("--preload-deliveries"), QStringLiteral("30000"), QStringLiteral("--preload-orders"),
              QStringLiteral("3000")},
             &run);
    if (QTest::currentTestFailed())
        return;
    const QString &output = run.output;

    QStringList phases;
    for (const QStringList &row : tableRows(output))
        phases << row.value(0);
    const QStringList history{QStringLiteral("create orders (preparation), history preloaded"),
                              QStringLiteral("(c) confirms (token + confirm), history preloaded"),
                              QStringLiteral("(a) unique callbacks, history preloaded"),
                              QStringLiteral("(b) duplicate callbacks, history preloaded"),
                              QStringLiteral("(b) duplicate callbacks while retention prunes a day")};
    QCOMPARE(phases.mid(phases.size() - history.size()), history);
    // The agent ran with retention every second, on the deliveries only.
    QVERIFY2(output.contains(u"agent arguments: --retention-interval-ms=1000"), qPrintable(output));

    const QJsonObject figures = run.json.value(QStringLiteral("history")).toObject();
    QCOMPARE(figures.value(QStringLiteral("deliveries")).toInteger(), 30000);
    QCOMPARE(figures.value(QStringLiteral("paid_orders")).toInteger(), 3000);
    // The tables hold the history on top of the first round's rows (100 unique and 100
    // duplicate deliveries, 100 paid orders, and the direct SQL's and floor's orders).
    QVERIFY2(figures.value(QStringLiteral("delivery_rows")).toInteger() >= 30000 + 200, qPrintable(output));
    QVERIFY2(figures.value(QStringLiteral("paid_order_rows")).toInteger() >= 3000 + 100, qPrintable(output));
    // A tenth of the deliveries is the aged day, and all of it went.
    QCOMPARE(figures.value(QStringLiteral("aged_deliveries")).toInteger(), 3000);
    QCOMPARE(figures.value(QStringLiteral("pruned_deliveries")).toInteger(), 3000);
    QVERIFY2(figures.value(QStringLiteral("prune_seconds")).toDouble(-1) >= 0, qPrintable(output));
    QVERIFY2(output.contains(u"- retention: 3000 of 3000 deliveries past retention pruned in"), qPrintable(output));
}

// scripts/bench-memory.sh's storm, 20 s: it ends without an error, samples the agent's RSS
// after the warm-up, and its byte-identical re-sends reach the agent's memory-first path
// (what the 30-minute runs in docs/benchmark.md rely on). No figure is judged.
void TestBenchSmoke::memoryStormResendsCopiesAndSamplesTheAgent()
{
    QProcess bench;
    bench.setProcessChannelMode(QProcess::SeparateChannels);
    bench.start(QStringLiteral(PAYONCE_BENCH_PATH),
                {QStringLiteral("--memory-storm"), QStringLiteral("20"), QStringLiteral("--db"),
                 QStringLiteral("sqlite"), QStringLiteral("--connections"), QStringLiteral("8")});
    QVERIFY(bench.waitForFinished(240000));
    const QString output = QString::fromUtf8(bench.readAllStandardOutput());
    const QString diagnostics = output + QString::fromUtf8(bench.readAllStandardError());
    QVERIFY2(bench.exitStatus() == QProcess::NormalExit && bench.exitCode() == 0, qPrintable(diagnostics));

    const QRegularExpression storm(
        QStringLiteral(R"(memory storm: sqlite, (\d+) callbacks in \d+ s \(\d+/s\), 0 errors; (\d+) RSS samples)"));
    const QRegularExpressionMatch ran = storm.match(output);
    QVERIFY2(ran.hasMatch(), qPrintable(diagnostics));
    const qint64 callbacks = ran.captured(1).toLongLong();
    QVERIFY2(ran.captured(2).toInt() >= 2, qPrintable(diagnostics)); // 16 s after a 4 s warm-up, every 5 s
    const QRegularExpression copies(
        QStringLiteral(R"(of them (\d+) re-sent byte for byte; the agent answered (\d+) copies from memory)"));
    const QRegularExpressionMatch said = copies.match(output);
    QVERIFY2(said.hasMatch(), qPrintable(diagnostics));
    const qint64 resent = said.captured(1).toLongLong();
    const qint64 fromMemory = said.captured(2).toLongLong();
    // Every other send of an order is a re-send (none is re-signed within 20 s): half the
    // callbacks, give or take one per order of the 2 000 and the 8 in flight at the end. A
    // re-send of an order whose first copy is still being paid goes to a callback thread,
    // so memory answers at most the re-sends.
    QVERIFY2(qAbs(resent * 2 - callbacks) <= 2000 + 16, qPrintable(diagnostics));
    QVERIFY2(fromMemory > 0 && fromMemory <= resent, qPrintable(diagnostics));
    QVERIFY2(output.contains(u"agent VmRSS min "), qPrintable(diagnostics));
    QVERIFY2(output.contains(u"agent VmRSS trend: slope "), qPrintable(diagnostics));
}

// The agent killed (SIGKILL, as a crash or the OOM killer ends it) while unique callbacks are
// in flight: the requests lost with it must read as the agent's death, not as connections
// the agent closed (docs/benchmark.md, "What dropped requests once"). The bench names the
// phase after which the agent was gone, runs no phase after it and exits 1.
void TestBenchSmoke::agentDyingMidPhaseIsNamedAndEndsTheRun()
{
    QProcess bench;
    bench.setProcessChannelMode(QProcess::SeparateChannels);
    bench.start(QStringLiteral(PAYONCE_BENCH_PATH),
                {QStringLiteral("--db"), QStringLiteral("sqlite"), QStringLiteral("--connections"), QStringLiteral("8"),
                 QStringLiteral("--duration"), QStringLiteral("5")});
    QVERIFY(bench.waitForStarted());
    QByteArray progress;
    QElapsedTimer waited;
    waited.start();
    const QByteArray uniqueStarts = "payonce-bench: (a) unique callbacks ...";
    while (!progress.contains(uniqueStarts) && bench.state() == QProcess::Running && waited.elapsed() < 180000) {
        bench.waitForReadyRead(200);
        progress += bench.readAllStandardError();
    }
    QVERIFY2(progress.contains(uniqueStarts), progress.constData());
    // At once: the phase's requests are sent from now on, and however fast a machine sends
    // them, the agent is gone before the phase ends.
    const qint64 agent = childNamed(bench.processId(), "payonce-agent");
    QVERIFY2(agent > 0, "no payonce-agent child of the bench");
    QCOMPARE(::kill(pid_t(agent), SIGKILL), 0);

    QVERIFY(bench.waitForFinished(180000));
    const QString output = QString::fromUtf8(bench.readAllStandardOutput());
    progress += bench.readAllStandardError();
    const QString diagnostics = output + QString::fromUtf8(progress);
    QVERIFY2(bench.exitStatus() == QProcess::NormalExit && bench.exitCode() == 1, qPrintable(diagnostics));
    QVERIFY2(output.contains(
                 QStringLiteral("the agent (pid %1) was gone after the phase \"(a) unique callbacks\"").arg(agent)),
             qPrintable(diagnostics));
    QVERIFY2(output.contains(u"\nFAILED: "), qPrintable(diagnostics));
    // No phase ran after it: neither the duplicates nor the limits.
    QVERIFY2(!progress.contains("payonce-bench: (b) duplicate callbacks ..."), qPrintable(diagnostics));
    QVERIFY2(!progress.contains("payonce-bench: limit: GET /healthz ..."), qPrintable(diagnostics));
}

QTEST_GUILESS_MAIN(TestBenchSmoke)
#include "tst_benchsmoke.moc"
