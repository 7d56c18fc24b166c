// payonce-agent: configuration, logging, storage, then serve until SIGTERM/SIGINT (SIGHUP reloads).
// This is the one place that wires adapters into the core's ports.

#include "agentruntime.h"
#include "exitcodes.h"
#include "signalwatcher.h"
#include "startupsafety.h"

#include "config/config.h"
#include "logging/categories.h"
#include "logging/logging.h"
#include "sql/database.h"

#include <QCoreApplication>
#include <QJsonObject>
#include <QRegularExpression>

#include <cstdio>

using namespace payonce;

namespace {

logging::Options loggingOptions(const config::Config &config)
{
    logging::Options options;
    options.format = config.logFormat == config::LogFormat::Json ? logging::Format::Json : logging::Format::Text;
    switch (config.logLevel) {
    case config::LogLevel::Debug: options.level = logging::Level::Debug; break;
    case config::LogLevel::Info: options.level = logging::Level::Info; break;
    case config::LogLevel::Warning: options.level = logging::Level::Warning; break;
    }
    options.fields = QJsonObject{{QStringLiteral("instance"), config.instanceId}};
    return options;
}

/// Logs one critical line and returns the exit code for the error: a start-up failure is
/// always exactly one line, in the configured log format.
int fail(const QString &what, const core::Error &error)
{
    qCCritical(lcApp).noquote() << what + QStringLiteral(": ") + error.internalMessage;
    return app::exitCodeFor(error.code);
}

/// --list-routes: one line per route, "METHOD /path/{placeholder} role[ websocket]", the
/// placeholders written as docs/openapi.yaml writes them.
QString routeListing(const QList<http::RouteInfo> &routes)
{
    static const QRegularExpression placeholder(QStringLiteral("<([^>]+)>"));
    QString out;
    for (const http::RouteInfo &route : routes) {
        QString path = route.pattern;
        path.replace(placeholder, QStringLiteral("{\\1}"));
        out += http::methodName(route.method) + u' ' + path + u' ' + http::roleName(route.minimumRole)
               + (route.webSocket ? QStringLiteral(" websocket") : QString()) + u'\n';
    }
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication application(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("payonce-agent"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PAYONCE_VERSION));

    // First, so that a SIGTERM during start-up is queued for the event loop instead of
    // killing the process half-way (the loop then stops at once).
    app::SignalWatcher signals;
    QObject::connect(&signals, &app::SignalWatcher::terminationRequested, &application, [](int signalNumber) {
        qCInfo(lcApp) << "signal" << signalNumber << "received: stopping";
        QCoreApplication::quit();
    });

    auto loaded = config::loadConfig(QCoreApplication::arguments());
    if (!loaded) {
        // Logging is not configured yet: the plain form, on stderr, one line.
        std::fprintf(stderr, "payonce-agent: %s\n", qPrintable(loaded.error().internalMessage));
        return app::ExitMisconfigured;
    }
    if (loaded->action == config::LoadResult::Action::ShowHelp
        || loaded->action == config::LoadResult::Action::ShowVersion) {
        std::fprintf(stdout, "%s\n", qPrintable(loaded->text));
        return app::ExitOk;
    }
    const config::Config &config = loaded->config;
    logging::install(loggingOptions(config));
    for (const QString &warning : loaded->warnings)
        qCWarning(lcConfig).noquote() << warning;

    if (auto safe = app::checkSafeToStart(config); !safe)
        return fail(QStringLiteral("cannot start"), safe.error());
    auto runtime = app::AgentRuntime::start(config);
    if (!runtime)
        return fail(QStringLiteral("cannot start"), runtime.error());
    if (loaded->action == config::LoadResult::Action::ListRoutes) {
        std::fputs(qPrintable(routeListing(runtime.value()->routes())), stdout);
        return app::ExitOk;
    }
    qCInfo(lcApp).noquote() << QStringLiteral("payonce-agent %1 started: %2")
                                   .arg(QCoreApplication::applicationVersion(), config.describeForLog());
    QObject::disconnect(&signals, nullptr, &application, nullptr);
    QObject::connect(&signals, &app::SignalWatcher::terminationRequested, &application, [&runtime](int signalNumber) {
        qCInfo(lcApp) << "signal" << signalNumber << "received: draining";
        if (!runtime.value()->drain(std::chrono::seconds(30)))
            qCWarning(lcApp) << "requests still running after 30 s; stopping anyway";
        QCoreApplication::quit();
    });
    // SIGHUP: the file is read and checked as at start; an invalid one changes nothing.
    QObject::connect(&signals, &app::SignalWatcher::reloadRequested, &application, [&runtime] {
        qCInfo(lcApp) << "SIGHUP received: reloading the configuration";
        auto reread = config::loadConfig(QCoreApplication::arguments());
        if (reread) {
            if (auto safe = app::checkSafeToStart(reread->config); !safe)
                reread = core::Result<config::LoadResult>(safe.error());
        }
        if (!reread) {
            qCWarning(lcConfig).noquote()
                << "reload refused, the running configuration stays:" << reread.error().internalMessage;
            return;
        }
        for (const QString &warning : reread->warnings)
            qCWarning(lcConfig).noquote() << warning;
        runtime.value()->reload(reread->config);
    });
    qCInfo(lcApp).noquote() << QStringLiteral("ready on %1:%2").arg(config.listen.host).arg(runtime.value()->port());
    const int code = QCoreApplication::exec();
    runtime.value().reset(); // joins every pool of the agent
    // Their threads close their database connections after the join: Qt Sql's globals
    // must outlive that (sql::Database::waitForThreadConnectionsClosed).
    if (!sql::Database::waitForThreadConnectionsClosed(std::chrono::seconds(10)))
        qCWarning(lcApp) << "database connections of ended threads still open after 10 s";
    qCInfo(lcApp) << "stopped";
    return code;
}
