// payonce-agent: configuration, logging, storage, then serve until SIGTERM/SIGINT.
// This is the one place that wires adapters into the core's ports.

#include "exitcodes.h"
#include "signalwatcher.h"

#include "config/config.h"
#include "logging/categories.h"
#include "logging/logging.h"
#include "redis/keystorefactory.h"
#include "sql/database.h"
#include "sql/migrationrunner.h"
#include "sql/sqlfenceepochsource.h"

#include <QCoreApplication>
#include <QJsonObject>

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
    if (loaded->action != config::LoadResult::Action::Run) {
        std::fprintf(stdout, "%s\n", qPrintable(loaded->text));
        return app::ExitOk;
    }
    const config::Config &config = loaded->config;
    logging::install(loggingOptions(config));
    for (const QString &warning : loaded->warnings)
        qCWarning(lcConfig).noquote() << warning;

    sql::Database database(sql::DatabaseOptions{config.db, config.dbConnectTimeoutMs, 8});
    if (auto connected = database.connect(); !connected)
        return fail(QStringLiteral("cannot start: database %1").arg(config.db.redacted()), connected.error());
    sql::MigrationRunner migrations(database);
    auto migrated = migrations.migrate();
    if (!migrated)
        return fail(QStringLiteral("cannot start: migrating %1").arg(config.db.redacted()), migrated.error());

    // Fencing epochs come from the database, so tokens keep growing across Redis restarts.
    sql::SqlFenceEpochSource fenceEpochs(database);
    redis::KeyStoreSettings keyStoreSettings;
    keyStoreSettings.redis = config.redis;
    keyStoreSettings.severalInstances = config.instances > 1;
    keyStoreSettings.connectTimeout = std::chrono::milliseconds(config.redisTimeoutMs);
    keyStoreSettings.commandTimeout = std::chrono::milliseconds(config.redisTimeoutMs);
    auto keyStore = redis::openKeyStore(keyStoreSettings, fenceEpochs);
    if (!keyStore)
        return fail(QStringLiteral("cannot start: key store %1").arg(config.redis.redacted()), keyStore.error());
    // Redis is an accelerator (design rule 5): down at start means degraded, not dead.
    if (auto pinged = keyStore.value()->ping(); !pinged) {
        qCWarning(lcApp).noquote() << QStringLiteral("key store %1 unreachable, running degraded: %2")
                                          .arg(config.redis.redacted(), pinged.error().internalMessage);
    }

    qCInfo(lcApp).noquote() << QStringLiteral("payonce-agent %1 started: %2")
                                   .arg(QCoreApplication::applicationVersion(), config.describeForLog());
    qCInfo(lcApp).noquote() << QStringLiteral("database %1 up, %2 migration(s) applied")
                                   .arg(config.db.redacted())
                                   .arg(migrated.value());
    qCInfo(lcApp).noquote() << QStringLiteral("key store %1 (%2)%3")
                                   .arg(keyStore.value()->backendName(), config.redis.redacted(),
                                        keyStore.value()->degraded() ? QStringLiteral(", degraded") : QString());

    qCInfo(lcApp) << "ready";
    const int code = QCoreApplication::exec();
    qCInfo(lcApp) << "stopped";
    return code;
}
