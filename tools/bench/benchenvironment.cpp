#include "benchenvironment.h"

#include "processusage.h"

#include <QFile>
#include <QJsonArray>

namespace payonce::bench {

namespace {
const QByteArray kBenchPlatformSerial = "PAYONCE_BENCH_PLATFORM_0001";
} // namespace

std::unique_ptr<BenchEnvironment> BenchEnvironment::start(const Options &options, QString *error)
{
    std::unique_ptr<BenchEnvironment> env(new BenchEnvironment);
    env->m_database = testsupport::TestDatabase::start(options.dialect, error);
    if (!env->m_database)
        return nullptr;
    if (options.redisServer) {
        env->m_redis = testsupport::RedisServer::start(error);
        if (!env->m_redis)
            return nullptr;
    }
    env->m_sim = testsupport::SimProcess::start(error);
    if (!env->m_sim)
        return nullptr;

    // The platform key the benchmark signs notifications with.
    auto platformKey = crypto::generateRsaKey(2048);
    if (!platformKey.ok()) {
        *error = platformKey.error().internalMessage;
        return nullptr;
    }
    auto publicPem = platformKey->publicKey().toPem();
    const QString publicPath = env->m_keys.filePath(QStringLiteral("bench_platform_public.pem"));
    QFile publicFile(publicPath);
    if (!publicPem.ok() || !publicFile.open(QIODevice::WriteOnly) || publicFile.write(*publicPem) < 0) {
        *error = QStringLiteral("cannot write ") + publicPath;
        return nullptr;
    }
    publicFile.close();

    QJsonObject wechat = env->m_sim->weChatConfig();
    QJsonArray platformKeys = wechat.value(QStringLiteral("platform_keys")).toArray();
    platformKeys.append(QJsonObject{{QStringLiteral("serial"), QString::fromLatin1(kBenchPlatformSerial)},
                                    {QStringLiteral("public_key"), publicPath}});
    wechat.insert(QStringLiteral("platform_keys"), platformKeys);
    env->m_notifier = std::make_unique<WeChatNotifier>(
        *platformKey, kBenchPlatformSerial,
        WeChatNotifier::Merchant{wechat.value(QStringLiteral("mchid")).toString(),
                                 wechat.value(QStringLiteral("appid")).toString(),
                                 wechat.value(QStringLiteral("apiv3_key")).toString().toLatin1()});

    testsupport::AgentProcess::Options agentOptions;
    agentOptions.db = env->m_database->url();
    agentOptions.sim = false;
    agentOptions.extraConfig = QJsonObject{
        {QStringLiteral("wechat"), wechat},
        {QStringLiteral("redis"), env->m_redis ? env->m_redis->url() : QStringLiteral("embedded")},
        // The patrol would scan every paid order while the phases run; the closer has
        // nothing to close within a run.
        {QStringLiteral("patrol"), QJsonObject{{QStringLiteral("interval_ms"), 0}}},
    };
    // The one line per delivered outbox event stays off: at thousands of payments a second
    // it is most of what the agent writes, and the benchmark measures payments, not logging.
    agentOptions.environment << QStringLiteral("QT_LOGGING_RULES=payonce.agent.outbox.info=false");
    if (options.streamIntervalMs > 0)
        agentOptions.extraConfig.insert(QStringLiteral("stream"),
                                        QJsonObject{{QStringLiteral("interval_ms"), options.streamIntervalMs}});
    agentOptions.extraArguments = options.agentArguments;
    env->m_agent = testsupport::AgentProcess::start(agentOptions, error);
    if (!env->m_agent)
        return nullptr;
    return env;
}

qint64 BenchEnvironment::databaseServerPid() const
{
    if (const testsupport::PostgresServer *postgres = m_database->postgres())
        return pidFromFile(postgres->folder() + QStringLiteral("/data/postmaster.pid"));
    if (const testsupport::MariaDbServer *mariadb = m_database->mariadb())
        return pidFromFile(mariadb->folder() + QStringLiteral("/mariadbd.pid"));
    return -1;
}

BenchEnvironment::~BenchEnvironment()
{
    // The agent first: it holds connections to the database and Redis.
    m_agent.reset();
    m_sim.reset();
    m_redis.reset();
    m_database.reset();
}

} // namespace payonce::bench
