#include "config/config.h"
#include "config/configoptions.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce::config;

namespace {

const QString kSha = QString(64, u'a');
const QString kApiV3Key = u"0123456789abcdef0123456789ABCDEF"_qs; // 32 ASCII bytes

QProcessEnvironment envOf(const QStringList &assignments)
{
    QProcessEnvironment env;
    for (const QString &a : assignments) {
        const qsizetype eq = a.indexOf(u'=');
        env.insert(a.left(eq), a.mid(eq + 1));
    }
    return env;
}

QStringList argsOf(const QStringList &flags)
{
    return QStringList{u"payonce-agent"_qs} + flags;
}

bool writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
}

} // namespace

class TestConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void defaults()
    {
        auto r = loadConfig(argsOf({}), QProcessEnvironment());
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        QCOMPARE(r->action, LoadResult::Action::Run);
        const Config &c = r->config;
        QCOMPARE(c.listen.toString(), u"127.0.0.1:8080"_qs);
        QCOMPARE(c.db.dialect, DatabaseUrl::Dialect::Sqlite);
        QCOMPARE(c.db.redacted(), u"sqlite:./payonce-data/payonce.db"_qs);
        QVERIFY(c.redis.embedded);
        QCOMPARE(c.dataDir, u"./payonce-data"_qs);
        QCOMPARE(c.logFormat, LogFormat::Text);
        QCOMPARE(c.logLevel, LogLevel::Info);
        QCOMPARE(c.dbConnectTimeoutMs, 5000);
        QCOMPARE(c.workerThreads, 8);
        QCOMPARE(c.redisTimeoutMs, 1000);
        QVERIFY(!c.instanceId.isEmpty());
        QVERIFY(c.authTokens.isEmpty());
        QCOMPARE(c.wechat.baseUrl, u"https://api.mch.weixin.qq.com"_qs);
        QCOMPARE(c.alipay.baseUrl, u"https://openapi.alipay.com"_qs);
        QCOMPARE(c.sim.enabled, false);
        QCOMPARE(c.sim.listen.toString(), u"127.0.0.1:8090"_qs);
        QCOMPARE(c.qa.enabled, false);
        QCOMPARE(c.http.idleTimeoutMs, 60000);
        QCOMPARE(c.http.headerTimeoutMs, 10000);
        QCOMPARE(c.http.maxConnections, 4096);
        QCOMPARE(c.http.maxConnectionsPerAddress, 256);
        QVERIFY(c.configFile.isEmpty());
        QVERIFY(r->warnings.isEmpty());
    }

    void dataDirMovesTheDefaultDatabase()
    {
        auto r = loadConfig(argsOf({u"--data-dir"_qs, u"/srv/payonce/"_qs}), QProcessEnvironment());
        QVERIFY(r.ok());
        QCOMPARE(r->config.db.sqlitePath, u"/srv/payonce/payonce.db"_qs);
    }

    // One key (listen) set by every combination of sources: the later source wins.
    void precedence_data()
    {
        QTest::addColumn<bool>("inFile");
        QTest::addColumn<bool>("inEnv");
        QTest::addColumn<bool>("inFlag");
        QTest::addColumn<QString>("expected");
        QTest::newRow("default") << false << false << false << u"127.0.0.1:8080"_qs;
        QTest::newRow("file") << true << false << false << u"10.0.0.1:1001"_qs;
        QTest::newRow("file < env") << true << true << false << u"10.0.0.2:1002"_qs;
        QTest::newRow("file < env < flag") << true << true << true << u"10.0.0.3:1003"_qs;
        QTest::newRow("file < flag") << true << false << true << u"10.0.0.3:1003"_qs;
        QTest::newRow("env < flag") << false << true << true << u"10.0.0.3:1003"_qs;
        QTest::newRow("env") << false << true << false << u"10.0.0.2:1002"_qs;
    }
    void precedence()
    {
        QFETCH(bool, inFile);
        QFETCH(bool, inEnv);
        QFETCH(bool, inFlag);
        const QString file = m_dir.filePath(u"precedence.json"_qs);
        const QByteArray json = R"({"listen": "10.0.0.1:1001", "log_level": "debug"})";
        QVERIFY(writeFile(file, json));
        QStringList flags;
        if (inFile)
            flags << u"--config"_qs << file;
        if (inFlag)
            flags << u"--listen"_qs << u"10.0.0.3:1003"_qs;
        QProcessEnvironment env;
        if (inEnv)
            env.insert(u"PAYONCE_LISTEN"_qs, u"10.0.0.2:1002"_qs);
        auto r = loadConfig(argsOf(flags), env);
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        QTEST(r->config.listen.toString(), "expected");
        // Keys not overridden keep the file's value.
        QCOMPARE(r->config.logLevel, inFile ? LogLevel::Debug : LogLevel::Info);
    }

    void precedenceAcrossKinds()
    {
        const QString file = m_dir.filePath(u"kinds.json"_qs);
        const QByteArray json = R"({"db_connect_timeout_ms": 100, "worker_threads": 2, "redis_timeout_ms": 7,
                                    "qa": {"enabled": true}, "sim": {"enabled": false},
                                    "log_format": "json", "redis": "redis://h:1/1"})";
        QVERIFY(writeFile(file, json));
        auto r = loadConfig(
            argsOf({u"--config"_qs, file, u"--db-connect-timeout-ms=300"_qs, u"--redis"_qs, u"embedded"_qs}),
            envOf({u"PAYONCE_DB_CONNECT_TIMEOUT_MS=200"_qs, u"PAYONCE_WORKER_THREADS=3"_qs,
                   u"PAYONCE_QA_ENABLED=off"_qs, u"PAYONCE_SIM_ENABLED=yes"_qs,
                   u"PAYONCE_LOG_FORMAT="_qs /* empty counts as unset */}));
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        QCOMPARE(r->config.dbConnectTimeoutMs, 300);
        QCOMPARE(r->config.workerThreads, 3);
        QCOMPARE(r->config.redisTimeoutMs, 7);
        QCOMPARE(r->config.qa.enabled, false);
        QCOMPARE(r->config.sim.enabled, true);
        QCOMPARE(r->config.logFormat, LogFormat::Json);
        QVERIFY(r->config.redis.embedded);
    }

    // The connection guard's limits: the "http" section of the file, PAYONCE_HTTP_*, and
    // --http-* flags, layered like every other key, and shown in the log summary.
    void httpGuardSettings()
    {
        const QString file = m_dir.filePath(u"http.json"_qs);
        const QByteArray json = R"({"http": {"idle_timeout_ms": 2000, "header_timeout_ms": 3000,
                                              "max_connections": 100, "max_connections_per_address": 10}})";
        QVERIFY(writeFile(file, json));
        auto r = loadConfig(
            argsOf({u"--config"_qs, file, u"--http-max-connections-per-address=20"_qs}),
            envOf({u"PAYONCE_HTTP_HEADER_TIMEOUT_MS=4000"_qs, u"PAYONCE_HTTP_MAX_CONNECTIONS_PER_ADDRESS=15"_qs}));
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        QVERIFY2(r->warnings.isEmpty(), qPrintable(r->warnings.join(u'\n')));
        const Config &c = r->config;
        QCOMPARE(c.http.idleTimeoutMs, 2000);          // file
        QCOMPARE(c.http.headerTimeoutMs, 4000);        // env over file
        QCOMPARE(c.http.maxConnections, 100);          // file
        QCOMPARE(c.http.maxConnectionsPerAddress, 20); // flag over env over file
        const QString line = c.describeForLog();
        QVERIFY2(
            line.contains(u"http={idle_timeout_ms=2000 header_timeout_ms=4000 max_connections=100 "
                          u"max_connections_per_address=20 max_body_bytes=65536 trusted_proxies=[] callback_threads=1 "
                          u"callback_queue=256 gateway_threads=8 gateway_queue=512}"_qs),
            qPrintable(line));
    }

    void configFileFromEnvironment()
    {
        const QString file = m_dir.filePath(u"fromenv.json"_qs);
        const QByteArray json = R"({"listen": "127.0.0.1:9999"})";
        QVERIFY(writeFile(file, json));
        auto r = loadConfig(argsOf({}), envOf({u"PAYONCE_CONFIG="_qs + file}));
        QVERIFY(r.ok());
        QCOMPARE(r->config.listen.port, 9999);
        QCOMPARE(r->config.configFile, QFileInfo(file).absoluteFilePath());
    }

    // resources/payonce.example.json is what operators copy: it must load as it is (its
    // "//" comment keys skipped without a warning) once its key files exist.
    void shippedExampleConfigLoads()
    {
        QFile example(QStringLiteral(PAYONCE_SOURCE_DIR "/resources/payonce.example.json"));
        QVERIFY(example.open(QIODevice::ReadOnly));
        const QString base = m_dir.filePath(u"example"_qs);
        QVERIFY(writeFile(base + u"/payonce.json"_qs, example.readAll()));
        for (const QString &key :
             {u"merchant.pem"_qs, u"wechatpay-platform.pem"_qs, u"alipay-app.pem"_qs, u"alipay-public.pem"_qs})
            QVERIFY(writeFile(base + u"/keys/"_qs + key, "pem"));
        auto r = loadConfig(argsOf({u"--config"_qs, base + u"/payonce.json"_qs}), QProcessEnvironment());
        QVERIFY(r.ok() || (qWarning() << r.error().internalMessage, false));
        QVERIFY2(r->warnings.isEmpty(), qPrintable(r->warnings.join(u'\n')));
        const Config &c = r->config;
        QCOMPARE(c.listen.toString(), u"127.0.0.1:8080"_qs);
        QVERIFY(c.redis.embedded);
        QCOMPARE(c.instances, 1);
        QCOMPARE(c.authTokens.size(), 2);
        QCOMPARE(c.wechat.mchid, u"1900000001"_qs);
        QCOMPARE(c.wechat.platformKeys.size(), 1);
        QVERIFY(c.wechat.merchantPrivateKeyPath.endsWith(u"/keys/merchant.pem"_qs));
        QCOMPARE(c.alipay.sellerId, u"2088000000000000"_qs);
        QCOMPARE(c.http.idleTimeoutMs, 60000);
        QCOMPARE(c.http.maxConnectionsPerAddress, 256);
        QCOMPARE(c.http.trustedProxies, (QStringList{u"127.0.0.1/32"_qs, u"::1/128"_qs}));
    }

    // The callback and gateway lanes: defaults (one callback thread on SQLite's one writer),
    // any source, ranges.
    void executionLaneSettings()
    {
        auto sqlite = loadConfig(argsOf({}), QProcessEnvironment());
        QVERIFY(sqlite.ok());
        QCOMPARE(sqlite->config.http.callbackThreads, 1);
        QCOMPARE(sqlite->config.http.callbackQueue, 256);
        QCOMPARE(sqlite->config.http.gatewayThreads, 8);
        QCOMPARE(sqlite->config.http.gatewayQueue, 512);
        auto postgres = loadConfig(argsOf({u"--db=postgresql://u:p@127.0.0.1:5432/payonce"_qs}), QProcessEnvironment());
        QVERIFY(postgres.ok());
        QCOMPARE(postgres->config.http.callbackThreads, 4);
        auto set = loadConfig(argsOf({u"--http-callback-threads=3"_qs, u"--http-gateway-queue=0"_qs}),
                              envOf({u"PAYONCE_HTTP_CALLBACK_QUEUE=10"_qs, u"PAYONCE_HTTP_GATEWAY_THREADS=32"_qs}));
        QVERIFY(set.ok() || (qWarning() << set.error().internalMessage, false));
        QCOMPARE(set->config.http.callbackThreads, 3); // given: kept on SQLite too
        QCOMPARE(set->config.http.callbackQueue, 10);
        QCOMPARE(set->config.http.gatewayThreads, 32);
        QCOMPARE(set->config.http.gatewayQueue, 0);
        auto zeroThreads = loadConfig(argsOf({u"--http-gateway-threads=0"_qs}), QProcessEnvironment());
        QVERIFY(!zeroThreads.ok());
        QVERIFY2(zeroThreads.error().internalMessage.contains(u"1-256"_qs),
                 qPrintable(zeroThreads.error().internalMessage));
    }

    // Names are kept trimmed and NFKC-normalised; one script per name, any script.
    void tokenNamesNormalised()
    {
        const QString tokens = uR"(PAYONCE_AUTH_TOKENS=[{"name":"  dave ","role":"operator","sha256":"%1"},)"
                               uR"({"name":"дейв","role":"approver","sha256":"%2"},)"
                               uR"({"name":"ops-team 2","role":"viewer","sha256":"%3"}])"_qs.arg(
                                   kSha, QString(64, u'b'), QString(64, u'c'));
        auto r = loadConfig(argsOf({}), envOf({tokens}));
        QVERIFY(r.ok() || (qWarning() << r.error().internalMessage, false));
        QCOMPARE(r->config.authTokens.size(), 3);
        QCOMPARE(r->config.authTokens.at(0).name, u"dave"_qs);
        QCOMPARE(r->config.authTokens.at(1).name, QString::fromUtf8("\xd0\xb4\xd0\xb5\xd0\xb9\xd0\xb2"));
        QCOMPARE(r->config.authTokens.at(2).name, u"ops-team 2"_qs);
    }

    void trustedProxiesFromEnvironment()
    {
        auto r = loadConfig(argsOf({}), envOf({u"PAYONCE_HTTP_TRUSTED_PROXIES=[\"10.0.0.0/8\", \" 127.0.0.1 \"]"_qs}));
        QVERIFY(r.ok() || (qWarning() << r.error().internalMessage, false));
        QCOMPARE(r->config.http.trustedProxies, (QStringList{u"10.0.0.0/8"_qs, u"127.0.0.1"_qs}));
        auto unset = loadConfig(argsOf({}), QProcessEnvironment());
        QVERIFY(unset.ok());
        QVERIFY(unset->config.http.trustedProxies.isEmpty());
        auto notStrings = loadConfig(argsOf({}), envOf({u"PAYONCE_HTTP_TRUSTED_PROXIES=[8]"_qs}));
        QVERIFY(!notStrings.ok());
        QVERIFY2(notStrings.error().internalMessage.contains(u"PAYONCE_HTTP_TRUSTED_PROXIES"_qs),
                 qPrintable(notStrings.error().internalMessage));
    }

    void redisSentinelSettings()
    {
        const QString file = m_dir.filePath(u"sentinel.json"_qs);
        // Not a raw string: moc reads the "//" of a URL in one as a comment.
        QVERIFY(writeFile(file,
                          "{\"redis\": \"redis:\057\057:MasterSecret@unused:6379/2\",\n"
                          "\"redis_sentinels\": [\"10.0.0.5:26380\", \"sentinel-b\", \"[::1]:26381\"],\n"
                          "\"redis_master_name\": \"payonce\", \"redis_sentinel_password\": \"SentinelSecret\"}"));
        auto r = loadConfig(argsOf({u"--config"_qs, file}), QProcessEnvironment());
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        const Config &c = r->config;
        QCOMPARE(c.redisSentinel.sentinels,
                 (QList<HostPort>{{u"10.0.0.5"_qs, 26380}, {u"sentinel-b"_qs, 26379}, {u"::1"_qs, 26381}}));
        QCOMPARE(c.redisSentinel.masterName, u"payonce"_qs);
        QCOMPARE(c.redisSentinel.password.reveal(), u"SentinelSecret"_qs);
        QCOMPARE(c.redis.database, 2);
        const QString line = c.describeForLog();
        QVERIFY2(
            line.contains(u"redis_sentinels=[10.0.0.5:26380,sentinel-b:26379,[::1]:26381] redis_master_name=payonce "
                          "redis_sentinel_password=<set>"_qs),
            qPrintable(line));
        QVERIFY(!line.contains(u"SentinelSecret"_qs));

        // From the environment, as a JSON array like the other lists.
        auto fromEnv = loadConfig(argsOf({u"--redis=redis://127.0.0.1:6379/0"_qs, u"--redis-master-name=m"_qs}),
                                  envOf({u"PAYONCE_REDIS_SENTINELS=[\"127.0.0.1:5000\"]"_qs}));
        QVERIFY2(fromEnv.ok(), qPrintable(fromEnv.ok() ? QString() : fromEnv.error().internalMessage));
        QCOMPARE(fromEnv->config.redisSentinel.sentinels, (QList<HostPort>{{u"127.0.0.1"_qs, 5000}}));

        // Redis Cluster: seeds with the default port 6379, the URL for the password.
        auto cluster = loadConfig(argsOf({u"--redis=redis://:ClusterSecret@unused/0"_qs}),
                                  envOf({u"PAYONCE_REDIS_CLUSTER=[\"10.0.0.5:7000\", \"node-b\"]"_qs}));
        QVERIFY2(cluster.ok(), qPrintable(cluster.ok() ? QString() : cluster.error().internalMessage));
        QCOMPARE(cluster->config.redisCluster, (QList<HostPort>{{u"10.0.0.5"_qs, 7000}, {u"node-b"_qs, 6379}}));
        QVERIFY(cluster->config.redisSentinel.sentinels.isEmpty());
        const QString clusterLine = cluster->config.describeForLog();
        QVERIFY2(clusterLine.contains(u"redis_cluster=[10.0.0.5:7000,node-b:6379]"_qs), qPrintable(clusterLine));
        QVERIFY(!clusterLine.contains(u"ClusterSecret"_qs));

        // Unset: no Sentinel mode.
        auto unset = loadConfig(argsOf({}), QProcessEnvironment());
        QVERIFY(unset.ok());
        QVERIFY(unset->config.redisSentinel.sentinels.isEmpty());
    }

    void publicBaseUrlLosesTrailingSlashes()
    {
        auto r = loadConfig(argsOf({u"--public-base-url=https://pay.example.com/payonce/"_qs}), QProcessEnvironment());
        QVERIFY(r.ok());
        QCOMPARE(r->config.publicBaseUrl, u"https://pay.example.com/payonce"_qs);
        auto unset = loadConfig(argsOf({}), QProcessEnvironment());
        QVERIFY(unset.ok());
        QVERIFY(unset->config.publicBaseUrl.isEmpty());
    }

    void commentKeysAreSkippedEverywhere()
    {
        const QString file = m_dir.filePath(u"comments.json"_qs);
        // An ordinary literal: moc 6.4 chokes on raw strings holding "//" (see above).
        QVERIFY(writeFile(file, "{\"//\": \"top\", \"//listen\": \"x\", \"listen\": \"127.0.0.1:9000\", "
                                "\"sim\": {\"//\": \"in a section\", \"enabled\": false}, \"typo_key\": 1}"));
        auto r = loadConfig(argsOf({u"--config"_qs, file}), QProcessEnvironment());
        QVERIFY(r.ok());
        QCOMPARE(r->config.listen.toString(), u"127.0.0.1:9000"_qs);
        // Only the real unknown key is reported; the comments are not.
        QCOMPARE(r->warnings.size(), 1);
        QVERIFY(r->warnings.first().contains(u"typo_key"));
    }

    void relativePathsFollowTheConfigFile()
    {
        const QString base = m_dir.filePath(u"site/etc"_qs);
        QVERIFY(writeFile(base + u"/keys/merchant.pem"_qs, "pem"));
        QVERIFY(writeFile(base + u"/keys/platform.pem"_qs, "pem"));
        QVERIFY(writeFile(base + u"/app.pem"_qs, "pem"));
        QVERIFY(writeFile(base + u"/alipay.pem"_qs, "pem"));
        const QString file = base + u"/payonce.json"_qs;
        const QByteArray json = R"({
            "db": "sqlite:./data/payonce.db",
            "data_dir": "data",
            "wechat": {"mchid": "1900000001", "merchant_private_key": "keys/merchant.pem",
                       "platform_keys": [{"serial": "PUB_KEY_ID_0001", "public_key": "./keys/platform.pem"}]},
            "alipay": {"app_id": "2021", "private_key": "app.pem", "alipay_public_key": "alipay.pem"}
        })";
        QVERIFY(writeFile(file, json));
        // Run from another folder: the file's folder must decide, not the working directory.
        const QString oldCwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(m_dir.path()));
        auto r = loadConfig(argsOf({u"--config"_qs, u"site/etc/payonce.json"_qs}), QProcessEnvironment());
        QVERIFY(QDir::setCurrent(oldCwd));
        QVERIFY(r.ok() || (qWarning() << r.error().internalMessage, false));
        const Config &c = r->config;
        const QString abs = QFileInfo(base).canonicalFilePath();
        QCOMPARE(QFileInfo(c.db.sqlitePath).absolutePath(), abs + u"/data"_qs);
        QCOMPARE(c.db.sqlitePath, abs + u"/data/payonce.db"_qs);
        QCOMPARE(c.dataDir, abs + u"/data"_qs);
        QCOMPARE(c.wechat.merchantPrivateKeyPath, abs + u"/keys/merchant.pem"_qs);
        QCOMPARE(c.wechat.platformKeys.size(), 1);
        QCOMPARE(c.wechat.platformKeys.at(0).serial, u"PUB_KEY_ID_0001"_qs);
        QCOMPARE(c.wechat.platformKeys.at(0).publicKeyPath, abs + u"/keys/platform.pem"_qs);
        QCOMPARE(c.alipay.privateKeyPath, abs + u"/app.pem"_qs);
        QCOMPARE(c.alipay.alipayPublicKeyPath, abs + u"/alipay.pem"_qs);
    }

    void relativePathsOutsideTheFileStayAsGiven()
    {
        auto r = loadConfig(argsOf({u"--db"_qs, u"sqlite:rel/x.db"_qs}), envOf({u"PAYONCE_DATA_DIR=rel"_qs}));
        QVERIFY(r.ok());
        QCOMPARE(r->config.db.sqlitePath, u"rel/x.db"_qs);
        QCOMPARE(r->config.dataDir, u"rel"_qs);
    }

    void listsFromFileAndEnvironment()
    {
        const QString pem = m_dir.filePath(u"p.pem"_qs);
        QVERIFY(writeFile(pem, "pem"));
        const QString tokens = QString::fromUtf8(R"([{"name":"alice","role":"operator","sha256":"%1"},
                                     {"name":"bob","role":"viewer","sha256":"%2"}])")
                                   .arg(kSha, QString(64, u'B'));
        auto r = loadConfig(argsOf({}),
                            envOf({u"PAYONCE_AUTH_TOKENS="_qs + tokens,
                                   uR"(PAYONCE_WECHAT_PLATFORM_KEYS=[{"serial":"S1","public_key":"%1"}])"_qs.arg(pem),
                                   u"PAYONCE_WECHAT_APIV3_KEY="_qs + kApiV3Key}));
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        const Config &c = r->config;
        QCOMPARE(c.authTokens.size(), 2);
        QCOMPARE(c.authTokens.at(0).name, u"alice"_qs);
        QCOMPARE(c.authTokens.at(0).role, u"operator"_qs);
        QCOMPARE(c.authTokens.at(0).sha256.reveal(), kSha);
        QCOMPARE(c.authTokens.at(1).sha256.reveal(), QString(64, u'b')); // normalized to lower case
        QCOMPARE(c.wechat.platformKeys.at(0).publicKeyPath, pem);
        QCOMPARE(c.wechat.apiv3Key.reveal(), kApiV3Key);
    }

    // Every validation error: where it came from and what is wrong, on one line.
    void validation_data()
    {
        QTest::addColumn<QByteArray>("file"); // config file content; empty: no file
        QTest::addColumn<QStringList>("env");
        QTest::addColumn<QStringList>("flags");
        QTest::addColumn<QString>("message"); // must be contained in the error; %FILE = the file

        const QStringList none;
        auto row = [](const char *name) -> QTestData & { return QTest::newRow(name); };
        row("public_base_url without scheme")
            << QByteArray() << none << QStringList{u"--public-base-url=pay.example.com"_qs}
            << u"--public-base-url: \"pay.example.com\" is not an http(s)://host[:port][/path] URL"_qs;
        row("public_base_url with a query") << QByteArray() << QStringList{u"PAYONCE_PUBLIC_BASE_URL=https://h/?x=1"_qs}
                                            << none << u"PAYONCE_PUBLIC_BASE_URL: \"https://h/?x=1\" is not"_qs;
        row("listen without port") << QByteArray() << none << QStringList{u"--listen=localhost"_qs}
                                   << u"--listen: port is missing (expected host:port)"_qs;
        row("listen without host") << QByteArray() << none << QStringList{u"--listen=:8080"_qs}
                                   << u"--listen: host is missing (expected host:port)"_qs;
        row("listen port 0") << QByteArray() << QStringList{u"PAYONCE_LISTEN=h:0"_qs} << none
                             << u"PAYONCE_LISTEN: port \"0\" is not a number in 1-65535"_qs;
        row("listen port 65536") << QByteArray() << none << QStringList{u"--listen=h:65536"_qs}
                                 << u"--listen: port \"65536\" is not a number in 1-65535"_qs;
        row("listen port text") << QByteArray() << none << QStringList{u"--listen=h:http"_qs}
                                << u"--listen: port \"http\" is not a number in 1-65535"_qs;
        row("listen ipv6 unbracketed") << QByteArray() << none << QStringList{u"--listen=::1:80"_qs}
                                       << u"--listen: an IPv6 host must be written in brackets"_qs;
        row("listen from file") << QByteArray(R"({"listen": "h:99999"})") << none << none
                                << u"config file %FILE, key \"listen\": port \"99999\" is not a number in 1-65535"_qs;
        row("db scheme") << QByteArray() << none << QStringList{u"--db=oracle://u:p@h/d"_qs}
                         << u"--db: invalid database URL: unknown scheme \"oracle\""_qs;
        row("db without database") << QByteArray() << QStringList{u"PAYONCE_DB=postgresql://host"_qs} << none
                                   << u"PAYONCE_DB: invalid database URL: the database name is missing"_qs;
        row("db bad port") << QByteArray() << none << QStringList{u"--db=mariadb://u:p@h:99999/d"_qs}
                           << u"--db: invalid database URL: port \"99999\" is not a number in 1-65535"_qs;
        row("redis tls") << QByteArray() << none << QStringList{u"--redis=rediss://h:6379"_qs}
                         << u"--redis: invalid Redis URL: rediss:// (TLS) is not supported"_qs;
        row("redis bare host") << QByteArray() << QStringList{u"PAYONCE_REDIS=localhost:6379"_qs} << none
                               << u"PAYONCE_REDIS: invalid Redis URL: expected \"embedded\""_qs;
        row("log format") << QByteArray() << none << QStringList{u"--log-format=xml"_qs}
                          << u"--log-format: \"xml\" is not a log format (text or json)"_qs;
        row("log level") << QByteArray() << QStringList{u"PAYONCE_LOG_LEVEL=trace"_qs} << none
                         << u"PAYONCE_LOG_LEVEL: \"trace\" is not a log level (debug, info or warning)"_qs;
        row("timeout not a number") << QByteArray() << none << QStringList{u"--db-connect-timeout-ms=5s"_qs}
                                    << u"--db-connect-timeout-ms: \"5s\" is not a whole number"_qs;
        row("timeout negative") << QByteArray() << none << QStringList{u"--db-connect-timeout-ms=-5"_qs}
                                << u"--db-connect-timeout-ms: \"-5\" is not a whole number"_qs;
        row("timeout zero") << QByteArray() << none << QStringList{u"--db-connect-timeout-ms=0"_qs}
                            << u"--db-connect-timeout-ms: must be a whole number in 1-600000"_qs;
        row("http idle timeout too small") << QByteArray() << none << QStringList{u"--http-idle-timeout-ms=99"_qs}
                                           << u"--http-idle-timeout-ms: must be a whole number in 100-3600000"_qs;
        row("http idle timeout too large")
            << QByteArray(R"({"http": {"idle_timeout_ms": 3600001}})") << none << none
            << u"config file %FILE, key \"http.idle_timeout_ms\": must be a whole number in 100-3600000"_qs;
        row("http header timeout not a number")
            << QByteArray() << QStringList{u"PAYONCE_HTTP_HEADER_TIMEOUT_MS=10s"_qs} << none
            << u"PAYONCE_HTTP_HEADER_TIMEOUT_MS: \"10s\" is not a whole number"_qs;
        row("http header timeout too large")
            << QByteArray() << none << QStringList{u"--http-header-timeout-ms=600001"_qs}
            << u"--http-header-timeout-ms: must be a whole number in 100-600000"_qs;
        row("http max connections zero") << QByteArray() << QStringList{u"PAYONCE_HTTP_MAX_CONNECTIONS=0"_qs} << none
                                         << u"PAYONCE_HTTP_MAX_CONNECTIONS: must be a whole number in 1-1000000"_qs;
        row("http per-address cap fraction")
            << QByteArray(R"({"http": {"max_connections_per_address": 2.5}})") << none << none
            << u"config file %FILE, key \"http.max_connections_per_address\": must be an integer, not a number"_qs;
        row("http section not an object") << QByteArray(R"({"http": 5})") << none << none
                                          << u"config file %FILE, key \"http\": must be an object, not a number"_qs;
        row("threads too many") << QByteArray() << QStringList{u"PAYONCE_WORKER_THREADS=1000"_qs} << none
                                << u"PAYONCE_WORKER_THREADS: must be a whole number in 1-256"_qs;
        row("several instances, embedded key store")
            << QByteArray() << none << QStringList{u"--instances=3"_qs}
            << u"--instances: 3 agents share this database, but the key store is the embedded one"_qs;
        row("several instances from env, embedded key store")
            << QByteArray() << QStringList{u"PAYONCE_INSTANCES=2"_qs, u"PAYONCE_REDIS=embedded"_qs} << none
            << u"PAYONCE_INSTANCES: 2 agents share this database"_qs;
        row("instances zero") << QByteArray() << none << QStringList{u"--instances=0"_qs}
                              << u"--instances: must be a whole number in 1-1024"_qs;
        // The platforms re-send for about a day: the log row and delivery that catch the
        // duplicates stay at least 3 days (or for ever).
        row("callback log kept 2 days") << QByteArray() << none << QStringList{u"--retention-callback-log-days=2"_qs}
                                        << u"--retention-callback-log-days: must be 0 (for ever) or at least 3 days"_qs;
        row("deliveries kept 1 day")
            << QByteArray(R"({"retention": {"deliveries_days": 1}})") << none << none
            << u"config file %FILE, key \"retention.deliveries_days\": must be 0 (for ever) or at least 3 days"_qs;
        row("retention batch zero") << QByteArray() << QStringList{u"PAYONCE_RETENTION_BATCH_SIZE=0"_qs} << none
                                    << u"PAYONCE_RETENTION_BATCH_SIZE: must be a whole number in 1-100000"_qs;
        row("redis timeout fraction")
            << QByteArray(R"({"redis_timeout_ms": 1.5})") << none << none
            << u"config file %FILE, key \"redis_timeout_ms\": must be an integer, not a number"_qs;
        row("instance id") << QByteArray() << none << QStringList{u"--instance-id=a b"_qs}
                           << u"--instance-id: \"a b\" is not 1-64 of [A-Za-z0-9._:-]"_qs;
        row("sim enabled not bool") << QByteArray() << QStringList{u"PAYONCE_SIM_ENABLED=maybe"_qs} << none
                                    << u"PAYONCE_SIM_ENABLED: \"maybe\" is not a boolean"_qs;
        row("sim on the agent's address")
            << QByteArray(R"({"sim": {"enabled": true, "listen": "127.0.0.1:8080"}})") << none << none
            << u"config file %FILE, key \"sim.listen\": the simulator cannot listen on the agent's own address 127.0.0.1:8080"_qs;
        row("apiv3 key length")
            << QByteArray() << QStringList{u"PAYONCE_WECHAT_APIV3_KEY=tooshort-secret"_qs} << none
            << u"PAYONCE_WECHAT_APIV3_KEY: must be 32 printable ASCII characters (got 15 characters)"_qs;
        row("key file missing")
            << QByteArray(R"({"wechat": {"merchant_private_key": "nope.pem"}})") << none << none
            << u"config file %FILE, key \"wechat.merchant_private_key\": file %DIR/nope.pem does not exist"_qs;
        // Not a raw string: moc 6.4 loses the whole class on this one ("//" inside it).
        row("base url")
            << QByteArray("{\"alipay\": {\"base_url\": \"ftp:/\x2fx\"}}") << none << none
            << u"config file %FILE, key \"alipay.base_url\": \"ftp://x\" is not an http:// or https:// URL"_qs;
        row("token role")
            << QByteArray(R"({"auth": {"tokens": [{"name": "a", "role": "admin", "sha256": "x"}]}})") << none << none
            << u"config file %FILE, key \"auth.tokens\": auth.tokens[0].role \"admin\" is not viewer, operator or approver"_qs;
        row("token hash") << QByteArray(R"({"auth": {"tokens": [{"name": "a", "role": "viewer", "sha256": "abc"}]}})")
                          << none << none
                          << u"config file %FILE, key \"auth.tokens\": auth.tokens[0].sha256 must be 64 hex digits"_qs;
        row("token name twice")
            << QByteArray()
            << QStringList{uR"(PAYONCE_AUTH_TOKENS=[{"name":"a","role":"viewer","sha256":"%1"},{"name":"a","role":"viewer","sha256":"%1"}])"_qs
                               .arg(kSha)}
            << none << u"PAYONCE_AUTH_TOKENS: auth.tokens[1]: the name \"a\" is used twice"_qs;
        // Four-eyes compares people, not spellings: names equal once trimmed, NFKC-normalised
        // and case-folded are one name; a name mixing scripts or holding invisible characters
        // is refused. JSON escapes keep the look-alikes visible here.
        const auto twoNames = [](const char *first, const char *second) -> QByteArray {
            // Built, not written as a raw string: moc 6.4 loses the class on some of those.
            const auto token = [](const char *name, const char *role, char digit) -> QByteArray {
                return "{\"name\": \"" + QByteArray(name) + "\", \"role\": \"" + role + "\", \"sha256\": \""
                       + QByteArray(64, digit) + "\"}";
            };
            return "{\"auth\": {\"tokens\": [" + token(first, "operator", 'a') + ", " + token(second, "approver", 'b')
                   + "]}}";
        };
        row("names differ in case")
            << twoNames("dave", "Dave") << none << none
            << u"auth.tokens[1]: the name \"Dave\" is \"dave\" of auth.tokens[0] written another way"_qs;
        row("names differ in white space")
            << twoNames("dave", " dave\\t") << none << none
            << u"auth.tokens[1]: the name \" dave\t\" is \"dave\" of auth.tokens[0] written another way"_qs;
        row("fullwidth look-alike")
            << twoNames("dave", "\\uff44\\uff41\\uff56\\uff45") << none << none
            << u"auth.tokens[1]: the name \"\uff44\uff41\uff56\uff45\" is \"dave\" of auth.tokens[0] written another way"_qs;
        row("composed and decomposed")
            << twoNames("zo\\u00eb", "Zoe\\u0308") << none << none
            << u"auth.tokens[1]: the name \"Zoe\u0308\" is \"zo\u00eb\" of auth.tokens[0] written another way"_qs;
        row("mixed scripts") << twoNames("d\\u0430ve", "lead") << none << none
                             << u"auth.tokens[0].name \"d\u0430ve\" mixes scripts (Latin, Cyrillic)"_qs;
        row("invisible character") << twoNames("da\\u200bve", "lead") << none << none
                                   << u"auth.tokens[0].name \"da\u200bve\" holds an invisible or control character"_qs;
        row("token field missing") << QByteArray(R"({"auth": {"tokens": [{"name": "a", "role": "viewer"}]}})") << none
                                   << none
                                   << u"config file %FILE, key \"auth.tokens\": auth.tokens[0].sha256 is missing"_qs;
        row("tokens env not json") << QByteArray() << QStringList{u"PAYONCE_AUTH_TOKENS=alice:secret"_qs} << none
                                   << u"PAYONCE_AUTH_TOKENS: must be a JSON array"_qs;
        row("platform serial twice") << QByteArray(
            R"({"wechat": {"platform_keys": [{"serial": "S", "public_key": "k.pem"}, {"serial": "S", "public_key": "k.pem"}]}})")
                                     << none << none << u"wechat.platform_keys[1]: the serial \"S\" is used twice"_qs;
        // Wrong JSON types name the key.
        row("listen is a number") << QByteArray(R"({"listen": 5})") << none << none
                                  << u"config file %FILE, key \"listen\": must be a string, not a number"_qs;
        row("sim is a string") << QByteArray(R"({"sim": "on"})") << none << none
                               << u"config file %FILE, key \"sim\": must be an object, not a string"_qs;
        row("sim.enabled is a string")
            << QByteArray(R"({"sim": {"enabled": "yes"}})") << none << none
            << u"config file %FILE, key \"sim.enabled\": must be true or false, not a string"_qs;
        row("tokens is an object") << QByteArray(R"({"auth": {"tokens": {}}})") << none << none
                                   << u"config file %FILE, key \"auth.tokens\": must be an array, not an object"_qs;
        row("platform key not an object") << QByteArray(R"({"wechat": {"platform_keys": ["k.pem"]}})") << none << none
                                          << u"wechat.platform_keys[0] must be an object, not a string"_qs;
        row("invalid json") << QByteArray(R"({"listen": )") << none << none
                            << u"config file %FILE: invalid JSON at offset"_qs;
        row("top level array") << QByteArray("[]") << none << none
                               << u"config file %FILE: the top level must be a JSON object"_qs;
        // The command line.
        row("unknown flag") << QByteArray() << none << QStringList{u"--lisen=h:1"_qs}
                            << u"Unknown option 'lisen'. (see --help)"_qs;
        row("flag without value") << QByteArray() << none << QStringList{u"--listen"_qs}
                                  << u"Missing value after '--listen'. (see --help)"_qs;
        row("positional") << QByteArray() << none << QStringList{u"serve"_qs}
                          << u"unexpected argument \"serve\" (see --help)"_qs;
        row("sentinels without master name")
            << QByteArray("{\"redis\": \"redis:\057\057h/0\", \"redis_sentinels\": [\"h:26379\"]}") << none << none
            << u"config file %FILE, key \"redis_sentinels\": Sentinels are given, but no "
               "redis_master_name to ask them for"_qs;
        row("master name without sentinels")
            << QByteArray() << none << QStringList{u"--redis=redis://h/0"_qs, u"--redis-master-name=m"_qs}
            << u"--redis-master-name: a master name without redis_sentinels to ask"_qs;
        row("sentinels with embedded") << QByteArray(R"({"redis_sentinels": ["h:26379"], "redis_master_name": "m"})")
                                       << none << none << u"Sentinels need redis=redis://"_qs;
        row("sentinel bad port")
            << QByteArray() << QStringList{u"PAYONCE_REDIS_SENTINELS=[\"h:0\"]"_qs}
            << QStringList{u"--redis=redis://h/0"_qs, u"--redis-master-name=m"_qs}
            << u"PAYONCE_REDIS_SENTINELS: redis_sentinels[0]: port \"0\" is not a number in 1-65535"_qs;
        row("sentinels not strings") << QByteArray("{\"redis\": \"redis:\057\057h/0\", \"redis_sentinels\": [26379]}")
                                     << none << none << u"redis_sentinels[0] must be a string, not a number"_qs;
        row("cluster with sentinels") << QByteArray(
            "{\"redis\": \"redis:\057\057h/0\", \"redis_cluster\": [\"h:7000\"], "
            "\"redis_sentinels\": [\"h:26379\"], \"redis_master_name\": \"m\"}")
                                      << none << none << u"Redis Cluster and Sentinel are two topologies"_qs;
        row("cluster with embedded") << QByteArray(R"({"redis_cluster": ["h:7000"]})") << none << none
                                     << u"key \"redis_cluster\": a cluster needs redis=redis://"_qs;
        row("cluster with a db") << QByteArray("{\"redis\": \"redis:\057\057h/3\", \"redis_cluster\": [\"h:7000\"]}")
                                 << none << none << u"Redis Cluster has database 0 only; the redis URL names db 3"_qs;
        row("cluster bad seed")
            << QByteArray() << QStringList{u"PAYONCE_REDIS_CLUSTER=[\"h:70000\"]"_qs}
            << QStringList{u"--redis=redis://h/0"_qs}
            << u"PAYONCE_REDIS_CLUSTER: redis_cluster[0]: port \"70000\" is not a number in 1-65535"_qs;
        row("no such config file") << QByteArray() << none << QStringList{u"--config=/nonexistent/p.json"_qs}
                                   << u"config file /nonexistent/p.json: cannot read it"_qs;
    }
    void validation()
    {
        QFETCH(QByteArray, file);
        QFETCH(QStringList, env);
        QFETCH(QStringList, flags);
        QFETCH(QString, message);

        QTemporaryDir dir(m_dir.filePath(u"v-XXXXXX"_qs));
        const QString path = dir.filePath(u"payonce.json"_qs);
        QVERIFY(writeFile(dir.filePath(u"k.pem"_qs), "pem"));
        if (!file.isEmpty()) {
            QVERIFY(writeFile(path, file));
            flags.prepend(u"--config="_qs + path);
        }
        message.replace(u"%FILE"_qs, path).replace(u"%DIR"_qs, dir.path());

        auto r = loadConfig(argsOf(flags), envOf(env));
        QVERIFY2(!r.ok(), "loading should have failed");
        QCOMPARE(r.error().code, payonce::core::ErrorCode::Misconfigured);
        const QString error = r.error().internalMessage;
        QVERIFY2(error.contains(message), qPrintable(u"got: "_qs + error + u"\nwant: "_qs + message));
        QVERIFY2(!error.contains(u'\n'), qPrintable(error));
        QVERIFY2(!error.contains(u"tooshort-secret"_qs), qPrintable(error));
        QVERIFY2(!error.contains(u"alice:secret"_qs), qPrintable(error));
    }

    void unknownKeysAreWarnings()
    {
        const QString file = m_dir.filePath(u"unknown.json"_qs);
        const QByteArray json = QString::fromUtf8(
                                    R"({"listen": "127.0.0.1:1", "future_key": 1, "wechat": {"new_thing": true},
                                    "auth": {"tokens": [{"name": "a", "role": "viewer", "sha256": "%1", "comment": "x"}]}})")
                                    .arg(kSha)
                                    .toUtf8();
        QVERIFY(writeFile(file, json));
        auto r = loadConfig(argsOf({u"--config"_qs, file}), QProcessEnvironment());
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        QCOMPARE(r->warnings.size(), 3);
        const QString all = r->warnings.join(u'\n');
        QVERIFY2(all.contains(u"unknown key \"future_key\" ignored"_qs), qPrintable(all));
        QVERIFY2(all.contains(u"unknown key \"wechat.new_thing\" ignored"_qs), qPrintable(all));
        QVERIFY2(all.contains(u"unknown key \"auth.tokens[0].comment\" ignored"_qs), qPrintable(all));
    }

    void secretsNeverInTheLogSummary()
    {
        const QString file = m_dir.filePath(u"secrets.json"_qs);
        const QString pem = m_dir.filePath(u"m.pem"_qs);
        QVERIFY(writeFile(pem, "-----BEGIN PRIVATE KEY-----"));
        const QByteArray json = QString::fromUtf8(
                                    R"({"auth": {"tokens": [{"name": "alice", "role": "approver", "sha256": "%1"}]},
                                    "wechat": {"mchid": "1900000001", "apiv3_key": "%2", "merchant_private_key": "%3"}})")
                                    .arg(kSha, kApiV3Key, pem)
                                    .toUtf8();
        QVERIFY(writeFile(file, json));
        auto r = loadConfig(
            argsOf({u"--config"_qs, file, u"--db"_qs, u"postgresql://payonce:Db%21Secret@127.0.0.1:5432/payonce"_qs}),
            envOf({u"PAYONCE_REDIS=redis://:RedisSecret@127.0.0.1:6379/0"_qs}));
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().internalMessage));
        const Config &c = r->config;
        QCOMPARE(c.db.password, u"Db!Secret"_qs);
        QCOMPARE(c.redis.password, u"RedisSecret"_qs);

        const QString line = c.describeForLog();
        const QStringList secrets{u"Db!Secret"_qs, u"Db%21Secret"_qs,      u"RedisSecret"_qs, kSha,
                                  kApiV3Key,       u"BEGIN PRIVATE KEY"_qs};
        for (const QString &secret : secrets) {
            QVERIFY2(!line.contains(secret), qPrintable(secret));
            QVERIFY(!c.db.redacted().contains(secret));
            QVERIFY(!c.redis.redacted().contains(secret));
        }
        QVERIFY2(line.contains(u"db=postgresql://payonce:***@127.0.0.1:5432/payonce"_qs), qPrintable(line));
        QVERIFY2(line.contains(u"redis=redis://:***@127.0.0.1:6379/0"_qs), qPrintable(line));
        QVERIFY2(line.contains(u"apiv3_key=<set>"_qs), qPrintable(line));
        QVERIFY2(line.contains(u"auth.tokens=[alice:approver]"_qs), qPrintable(line));
        QVERIFY2(line.contains(u"merchant_private_key="_qs + pem), qPrintable(line)); // a path is not a secret
        QVERIFY(!line.contains(u'\n'));
    }

    void helpListsEveryFlagAndVariable()
    {
        auto r = loadConfig(argsOf({u"--help"_qs, u"--listen=bad"_qs}), QProcessEnvironment());
        QVERIFY(r.ok()); // --help does not validate anything
        QCOMPARE(r->action, LoadResult::Action::ShowHelp);
        const QString help = r->text;
        for (const OptionSpec &o : optionTable()) {
            QVERIFY2(help.contains(envName(o)), qPrintable(envName(o)));
            if (!o.flag.isEmpty())
                QVERIFY2(help.contains(u"--"_qs + o.flag + u' '), qPrintable(o.flag.toString()));
            if (!o.defaultText.isEmpty())
                QVERIFY2(help.contains(o.defaultText), qPrintable(o.defaultText.toString()));
        }
        const QStringList required{u"--listen"_qs,
                                   u"--db"_qs,
                                   u"--redis"_qs,
                                   u"--config"_qs,
                                   u"--log-format"_qs,
                                   u"--log-level"_qs,
                                   u"--db-connect-timeout-ms"_qs,
                                   u"--data-dir"_qs,
                                   u"--help"_qs,
                                   u"--version"_qs};
        for (const QString &flag : required)
            QVERIFY2(help.contains(flag), qPrintable(flag));
        QVERIFY(help.contains(u"PAYONCE_WECHAT_APIV3_KEY"_qs));
        QVERIFY(help.contains(u"PAYONCE_WECHAT_MCHID"_qs));
    }

    void envNamesFollowTheKeys()
    {
        QCOMPARE(envName(*findOption(u"wechat.apiv3_key")), u"PAYONCE_WECHAT_APIV3_KEY"_qs);
        QCOMPARE(envName(*findOption(u"listen")), u"PAYONCE_LISTEN"_qs);
        QCOMPARE(envName(*findOption(u"log_format")), u"PAYONCE_LOG_FORMAT"_qs);
        QCOMPARE(envName(*findOption(u"config")), u"PAYONCE_CONFIG"_qs);
        for (const OptionSpec &o : optionTable()) {
            QVERIFY(findOption(o.key) == &o); // keys are unique
            if (o.kind == OptionKind::Secret)
                QVERIFY2(o.flag.isEmpty(), "a secret must not be a flag: flags show in ps");
        }
    }

    void version()
    {
        auto r = loadConfig(argsOf({u"--version"_qs}), QProcessEnvironment());
        QVERIFY(r.ok());
        QCOMPARE(r->action, LoadResult::Action::ShowVersion);
        QVERIFY(r->text.startsWith(u"payonce-agent "_qs));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestConfig)
#include "tst_config.moc"
