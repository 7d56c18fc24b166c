// payonce-bench: the agent's throughput and latency against the limits of the same work
// and with a slow stream client. See README.md, "Benchmark".

#include "benchoptions.h"
#include "benchrun.h"
#include "memorystorm.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QLoggingCategory>

#include <cstdio>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("payonce-bench"));
    // The direct-SQL phase opens one connection per thread, each announced at info.
    QLoggingCategory::setFilterRules(QStringLiteral("payonce.agent.sql.debug=false\npayonce.agent.sql.info=false"));
    const payonce::bench::BenchOptions options = payonce::bench::parseBenchOptions(app.arguments());
    if (options.memoryStorm.count() > 0)
        return payonce::bench::runMemoryStorm(options);
    const payonce::bench::BenchReport report = payonce::bench::runBenchmark(options);
    report.print(stdout);
    if (!options.jsonPath.isEmpty()) {
        QFile json(options.jsonPath);
        if (!json.open(QIODevice::WriteOnly) || json.write(QJsonDocument(report.toJson()).toJson()) < 0) {
            std::fprintf(stderr, "payonce-bench: cannot write %s\n", qPrintable(options.jsonPath));
            return 1;
        }
    }
    return report.succeeded() ? 0 : 1;
}
