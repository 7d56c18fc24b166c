// payonce-sim-check: the lifecycle simulation (docs/testing.md, "Lifecycle simulation").
//
//   payonce-sim-check --dialect postgresql --seed 42 --steps 1500
//   payonce-sim-check --dialect mariadb --seeds 1,2,3 --steps 800
//   payonce-sim-check --dialect sqlite --seed 7 --mutant cas-ignores-status --expect order-transition
//   payonce-sim-check --dialect sqlite --seed random --minutes 30
//
// Every seed runs on a database server of its own, started here on a free loopback port
// (SQLite: a file in a temporary folder). Exit 0 when every seed ran clean (or, with
// --expect, when every seed's violation was that invariant), 1 on a violation, 2 on a
// usage or start-up error.
#include "simdriver.h"

#include "support/serverharness.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QTextStream>

#include <cstdio>

using namespace payonce;
using namespace payonce::simulation;

namespace {

void out(const QString &line)
{
    std::fputs(qPrintable(line + QLatin1Char('\n')), stdout);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("payonce lifecycle simulation: seeded random money operations, "
                                                    "checked against the ledger after every step"));
    parser.addHelpOption();
    const QCommandLineOption dialectOption(QStringLiteral("dialect"), QStringLiteral("sqlite, postgresql or mariadb"),
                                           QStringLiteral("dialect"), QStringLiteral("sqlite"));
    const QCommandLineOption seedOption(QStringLiteral("seed"), QStringLiteral("one seed, or 'random'"),
                                        QStringLiteral("seed"));
    const QCommandLineOption seedsOption(QStringLiteral("seeds"), QStringLiteral("seeds, comma-separated"),
                                         QStringLiteral("list"));
    const QCommandLineOption stepsOption(QStringLiteral("steps"), QStringLiteral("operations per seed"),
                                         QStringLiteral("n"), QStringLiteral("1000"));
    const QCommandLineOption ordersOption(QStringLiteral("orders"), QStringLiteral("orders at most per seed"),
                                          QStringLiteral("n"), QStringLiteral("300"));
    const QCommandLineOption mutantOption(
        QStringLiteral("mutant"),
        QStringLiteral("switch on a deliberately wrong behaviour: %1").arg(mutantNames().join(QStringLiteral(", "))),
        QStringLiteral("name"));
    const QCommandLineOption expectOption(QStringLiteral("expect"),
                                          QStringLiteral("succeed only if every seed breaks one of these invariants "
                                                         "(comma-separated)"),
                                          QStringLiteral("invariants"));
    const QCommandLineOption traceOption(QStringLiteral("trace"), QStringLiteral("write the operation trace here"),
                                         QStringLiteral("file"));
    const QCommandLineOption minutesOption(
        QStringLiteral("minutes"), QStringLiteral("with --seed random: fresh seeds until this much time has passed"),
        QStringLiteral("m"));
    parser.addOptions({dialectOption, seedOption, seedsOption, stepsOption, ordersOption, mutantOption, expectOption,
                       traceOption, minutesOption});
    parser.process(app);

    const QString dialectText = parser.value(dialectOption);
    testsupport::Dialect dialect;
    if (dialectText == u"sqlite")
        dialect = testsupport::Dialect::Sqlite;
    else if (dialectText == u"postgresql")
        dialect = testsupport::Dialect::PostgreSql;
    else if (dialectText == u"mariadb")
        dialect = testsupport::Dialect::MariaDb;
    else {
        out(QStringLiteral("--dialect %1: expected sqlite, postgresql or mariadb").arg(dialectText));
        return 2;
    }
    const QString mutant = parser.value(mutantOption);
    if (!mutant.isEmpty() && !mutantNames().contains(mutant)) {
        out(QStringLiteral("--mutant %1: unknown; there are %2").arg(mutant, mutantNames().join(QStringLiteral(", "))));
        return 2;
    }
#ifndef PAYONCE_SIMULATION_MUTANTS
    if (!mutant.isEmpty()) {
        out(QStringLiteral("--mutant: this build has no mutant hooks"));
        return 2;
    }
#endif
    bool ok = true;
    const int steps = parser.value(stepsOption).toInt(&ok);
    const int maxOrders = parser.value(ordersOption).toInt(&ok);
    if (!ok || steps <= 0 || maxOrders <= 0) {
        out(QStringLiteral("--steps and --orders take positive whole numbers"));
        return 2;
    }
    const bool randomSeeds = parser.value(seedOption) == u"random";
    QList<quint64> seeds;
    if (parser.isSet(seedsOption)) {
        for (const QString &s : parser.value(seedsOption).split(QLatin1Char(','), Qt::SkipEmptyParts))
            seeds << s.toULongLong();
    } else if (parser.isSet(seedOption) && !randomSeeds) {
        seeds << parser.value(seedOption).toULongLong();
    } else if (!randomSeeds) {
        seeds << 1;
    }
    const qint64 budgetMs = qint64(parser.value(minutesOption).toDouble() * 60000);
    const QString expect = parser.value(expectOption);
    const QStringList expected = expect.split(QLatin1Char(','), Qt::SkipEmptyParts);

    std::unique_ptr<QFile> traceFile;
    QTextStream trace;
    if (parser.isSet(traceOption)) {
        traceFile = std::make_unique<QFile>(parser.value(traceOption));
        if (!traceFile->open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
            out(QStringLiteral("--trace %1: %2").arg(traceFile->fileName(), traceFile->errorString()));
            return 2;
        }
        trace.setDevice(traceFile.get());
    }

    QElapsedTimer elapsed;
    elapsed.start();
    int seedsRun = 0, violations = 0, expectedSeen = 0;
    qint64 stepsRun = 0;
    for (int index = 0;; ++index) {
        quint64 seed = 0;
        if (randomSeeds) {
            if (index > 0 && elapsed.elapsed() >= budgetMs)
                break;
            seed = QRandomGenerator::system()->generate64() % 1000000000ULL;
        } else {
            if (index >= seeds.size())
                break;
            seed = seeds.at(index);
        }
        out(QStringLiteral("seed %1 dialect %2 steps %3 mutant %4")
                .arg(seed)
                .arg(dialectText)
                .arg(steps)
                .arg(mutant.isEmpty() ? QStringLiteral("none") : mutant));
        QString error;
        auto server = testsupport::TestDatabase::start(dialect, &error);
        if (!server) {
            out(QStringLiteral("cannot start the %1 database: %2").arg(dialectText, error));
            return 2;
        }
        auto url = config::DatabaseUrl::parse(server->url());
        if (!url) {
            out(QStringLiteral("database url %1: %2").arg(server->url(), url.error().internalMessage));
            return 2;
        }
        RunOptions options;
        options.seed = seed;
        options.steps = steps;
        options.maxOrders = maxOrders;
        options.mutant = mutant;
        options.url = url.value();
        options.dialect = dialectText;
        if (traceFile)
            options.traceLine = [&](const QString &line) { trace << line << '\n'; };
        options.report = out;
        SimDriver driver(options);
        const RunResult result = driver.run();
        ++seedsRun;
        stepsRun += result.stepsRun;
        if (result.violation && result.violation->invariant == u"storage") {
            out(QStringLiteral("seed %1: storage failed at step %2: %3")
                    .arg(seed)
                    .arg(result.violationStep)
                    .arg(result.violation->message));
            return 2;
        }
        if (result.violation) {
            ++violations;
            if (expected.contains(result.violation->invariant))
                ++expectedSeen;
            out(QStringLiteral("VIOLATION seed %1 dialect %2 step %3: %4")
                    .arg(seed)
                    .arg(dialectText)
                    .arg(result.violationStep > steps ? QStringLiteral("end (quiescence)")
                                                      : QString::number(result.violationStep))
                    .arg(result.violation->invariant));
            out(QStringLiteral("  %1").arg(result.violation->message));
            out(QStringLiteral("last operations:"));
            for (const QString &op : driver.lastOperations())
                out(QStringLiteral("  %1").arg(op));
            out(QStringLiteral("replay: payonce-sim-check --dialect %1 --seed %2 --steps %3%4")
                    .arg(dialectText)
                    .arg(seed)
                    .arg(steps)
                    .arg(mutant.isEmpty() ? QString() : QStringLiteral(" --mutant ") + mutant));
            if (expect.isEmpty() && !randomSeeds)
                break;
        } else {
            out(QStringLiteral("seed %1: %2 steps, quiescent, every invariant held").arg(seed).arg(result.stepsRun));
        }
    }
    trace.flush();
    out(QStringLiteral("seeds run %1 · steps %2 · violations %3 · %4 s")
            .arg(seedsRun)
            .arg(stepsRun)
            .arg(violations)
            .arg(elapsed.elapsed() / 1000));
    if (!expect.isEmpty()) {
        if (expectedSeen == seedsRun) {
            out(QStringLiteral("mutant %1 caught by %2 on every seed").arg(mutant, expect));
            return 0;
        }
        out(QStringLiteral("mutant %1: %2 of %3 seed(s) broke %4")
                .arg(mutant)
                .arg(expectedSeen)
                .arg(seedsRun)
                .arg(expect));
        return 1;
    }
    return violations == 0 ? 0 : 1;
}
