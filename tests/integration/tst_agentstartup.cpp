// The agent binary, started as an operator would, against databases it cannot use, and
// with settings that are unsafe (the simulator or QA reachable from the network, QA
// without the simulator or a token of its own, config and key files open to others, the
// example config's tokens, keys from the repository's test fixtures): each case must end the process with exactly one clear error
// line and the documented exit code, within the configured connect timeout (plus process
// start-up), never a hang.

#include "support/serverharness.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace payonce::testsupport;

namespace {

constexpr int kConnectTimeoutMs = 2000;
// Process start, Qt start-up and the driver's rounding up to whole seconds: the bound
// that separates "gave up at the timeout" from "hung".
constexpr int kSlackMs = 8000;

struct Run {
    int exitCode = -1;
    bool finished = false;
    qint64 elapsedMs = 0;
    QStringList stderrLines;
};

Run runAgent(const QStringList &arguments)
{
    QTemporaryDir workDir;
    QProcess agent;
    agent.setWorkingDirectory(workDir.path());
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const QStringList names = environment.keys();
    for (const QString &name : names) {
        if (name.startsWith(u"PAYONCE_"))
            environment.remove(name); // the test decides every setting
    }
    agent.setProcessEnvironment(environment);
    QElapsedTimer timer;
    timer.start();
    agent.start(QStringLiteral(PAYONCE_AGENT_PATH),
                QStringList{QStringLiteral("--db-connect-timeout-ms"), QString::number(kConnectTimeoutMs)} + arguments);
    Run run;
    run.finished = agent.waitForFinished(kConnectTimeoutMs + kSlackMs + 20000);
    run.elapsedMs = timer.elapsed();
    if (!run.finished) {
        agent.kill();
        agent.waitForFinished();
    }
    run.exitCode = agent.exitCode();
    const QStringList lines = QString::fromUtf8(agent.readAllStandardError()).split(u'\n', Qt::SkipEmptyParts);
    run.stderrLines = lines;
    return run;
}

/// `contents` in a new file of exactly `mode` (the umask does not apply).
bool writeFile(const QString &path, const QByteArray &contents, mode_t mode)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(contents) != contents.size())
        return false;
    file.close();
    return ::chmod(QFile::encodeName(path).constData(), mode) == 0;
}

QString describe(const Run &run)
{
    return QStringLiteral("exit %1 after %2 ms, stderr:\n%3")
        .arg(run.exitCode)
        .arg(run.elapsedMs)
        .arg(run.stderrLines.join(u'\n'));
}

/// A start refused as misconfigured (exit 2) in one line of stderr naming every one of
/// `mentions`, before anything was made: no database file, no data folder at `dataDir`.
void verifyRefusedBeforeAnythingWasMade(const Run &run, const QStringList &mentions, const QString &dataDir)
{
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(run)));
    QVERIFY2(run.stderrLines.size() == 1, qPrintable(QStringLiteral("not one line: ") + describe(run)));
    for (const QString &word : mentions)
        QVERIFY2(run.stderrLines.first().contains(word), qPrintable(word + u": "_qs + describe(run)));
    QVERIFY2(!QFile::exists(dataDir), qPrintable(describe(run)));
}

} // namespace

class TestAgentStartup : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        m_postgres = PostgresServer::start(&error);
        QVERIFY2(m_postgres, qPrintable(error));
        m_mariadb = MariaDbServer::start(&error);
        QVERIFY2(m_mariadb, qPrintable(error));
        QVERIFY(m_silent.listen(QHostAddress::LocalHost)); // accepts (kernel backlog), never answers
    }

    void refusesToStart_data()
    {
        QTest::addColumn<QString>("db");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("mentions");
        const int closed = freeLoopbackPort();
        const QString silent = QString::number(m_silent.serverPort());

        QTest::newRow("malformed: no scheme")
            << QStringLiteral("localhost:5432/payonce") << 2 << QStringLiteral("--db");
        QTest::newRow("malformed: bad port")
            << QStringLiteral("postgresql://u:p@127.0.0.1:99999/x") << 2 << QStringLiteral("--db");
        QTest::newRow("malformed: no database")
            << QStringLiteral("mariadb://u:p@127.0.0.1:3306") << 2 << QStringLiteral("--db");
        QTest::newRow("postgresql: closed port")
            << QStringLiteral("postgresql://u:p@127.0.0.1:%1/x").arg(closed) << 3 << QStringLiteral("cannot connect");
        QTest::newRow("mariadb: closed port")
            << QStringLiteral("mariadb://u:p@127.0.0.1:%1/x").arg(closed) << 3 << QStringLiteral("cannot connect");
        QTest::newRow("postgresql: silent listener")
            << QStringLiteral("postgresql://u:p@127.0.0.1:%1/x").arg(silent) << 3 << QStringLiteral("cannot connect");
        QTest::newRow("mariadb: silent listener")
            << QStringLiteral("mariadb://u:p@127.0.0.1:%1/x").arg(silent) << 3 << QStringLiteral("cannot connect");
        QTest::newRow("postgresql: wrong password")
            << m_postgres->urlWithPassword(QStringLiteral("not-the-password")) << 2 << QStringLiteral("password");
        QTest::newRow("mariadb: wrong password")
            << m_mariadb->urlWithPassword(QStringLiteral("not-the-password")) << 2 << QStringLiteral("Access denied");
    }
    void refusesToStart()
    {
        QFETCH(QString, db);
        QFETCH(int, exitCode);
        QFETCH(QString, mentions);
        const Run run = runAgent({QStringLiteral("--db"), db});
        QVERIFY2(run.finished, qPrintable(QStringLiteral("the agent hung: ") + describe(run)));
        QVERIFY2(run.elapsedMs < kConnectTimeoutMs + kSlackMs, qPrintable(describe(run)));
        QVERIFY2(run.exitCode == exitCode, qPrintable(describe(run)));
        QVERIFY2(run.stderrLines.size() == 1, qPrintable(QStringLiteral("not one line: ") + describe(run)));
        QVERIFY2(run.stderrLines.first().contains(mentions, Qt::CaseInsensitive), qPrintable(describe(run)));
        // The password never reaches the log, whatever failed.
        QVERIFY2(!run.stderrLines.first().contains(u"not-the-password"), qPrintable(describe(run)));
        QVERIFY2(!run.stderrLines.first().contains(m_postgres->password()), qPrintable(describe(run)));
    }

    void refusesUnsafeSettings_data()
    {
        QTest::addColumn<QByteArray>("config");
        QTest::addColumn<QStringList>("mentions");
        const QByteArray anyAddress = "\"listen\": \"0.0.0.0:" + QByteArray::number(freeLoopbackPort()) + "\"";
        QTest::newRow("simulator on every address") << "{" + anyAddress + ", \"sim\": {\"enabled\": true}}"
                                                    << QStringList{u"sim.enabled"_qs, u"0.0.0.0"_qs, u"loopback"_qs};
        QTest::newRow("simulator listening off loopback")
            << QByteArray("{\"sim\": {\"enabled\": true, \"listen\": \"0.0.0.0:18090\"}}")
            << QStringList{u"sim.listen"_qs, u"0.0.0.0"_qs, u"loopback"_qs};
        QTest::newRow("qa on every address") << "{" + anyAddress + ", \"qa\": {\"enabled\": true}}"
                                             << QStringList{u"qa.enabled"_qs, u"0.0.0.0"_qs, u"loopback"_qs};
        QTest::newRow("qa on a LAN address")
            << QByteArray("{\"listen\": \"192.168.7.7:8080\", \"qa\": {\"enabled\": true}}")
            << QStringList{u"qa.enabled"_qs, u"192.168.7.7"_qs};
        // QA drives the simulated platform (pays, notifies, injects faults): without one it
        // would drive whatever wechat.base_url names, the real platform included.
        const QByteArray loopbackListen = "\"listen\": \"127.0.0.1:" + QByteArray::number(freeLoopbackPort()) + "\"";
        QTest::newRow("qa without the simulator")
            << "{" + loopbackListen + ", \"qa\": {\"enabled\": true}}"
            << QStringList{u"qa.enabled"_qs, u"simulator"_qs, u"https://api.mch.weixin.qq.com"_qs};
        QTest::newRow("qa with a platform off this machine")
            << "{" + loopbackListen
                   + ", \"qa\": {\"enabled\": true}, \"wechat\": {\"base_url\": \"http://10.1.2.3:8090\"}}"
            << QStringList{u"qa.enabled"_qs, u"simulator"_qs, u"http://10.1.2.3:8090"_qs};
        QTest::newRow("qa peer off this machine")
            << QByteArray("{\"sim\": {\"enabled\": true}, \"qa\": {\"enabled\": true, \"peers\": "
                          "[\"http://10.1.2.3:8080\"]}}")
            << QStringList{u"qa.peers"_qs, u"http://10.1.2.3:8080"_qs, u"loopback"_qs};
        // QA's set-up calls carry a token of its own, never a caller's: an operator's.
        QTest::newRow("qa without a token of its own")
            << QByteArray("{\"sim\": {\"enabled\": true}, \"qa\": {\"enabled\": true}}")
            << QStringList{u"qa.token"_qs, u"PAYONCE_QA_TOKEN"_qs, u"operator"_qs};
        QTest::newRow("qa token not among auth.tokens")
            << QByteArray("{\"sim\": {\"enabled\": true}, \"qa\": {\"enabled\": true, \"token\": \"qa-token\"}}")
            << QStringList{u"qa.token"_qs, u"auth.tokens"_qs};
        QTest::newRow("qa token of an approver") // sha256("qa-token")
            << QByteArray("{\"sim\": {\"enabled\": true}, \"qa\": {\"enabled\": true, \"token\": \"qa-token\"}, "
                          "\"auth\": {\"tokens\": [{\"name\": \"qa\", \"role\": \"approver\", \"sha256\": "
                          "\""
                          + QCryptographicHash::hash("qa-token", QCryptographicHash::Sha256).toHex() + "\"}]}}")
            << QStringList{u"qa.token"_qs, u"\"qa\""_qs, u"approver"_qs};
        // resources/payonce.example.json's two tokens, "example-desk-token" and "example-lead-token".
        QTest::newRow("example desk token")
            << QByteArray("{\"auth\": {\"tokens\": [{\"name\": \"desk\", \"role\": \"operator\", \"sha256\": "
                          "\"e34eae51aad85aff8de66fdfd39c1a297d1f14d5db6781e9227c023ed9c9d0b4\"}]}}")
            << QStringList{u"auth.tokens"_qs, u"desk"_qs, u"example"_qs};
        QTest::newRow("example lead token")
            << QByteArray("{\"auth\": {\"tokens\": [{\"name\": \"lead\", \"role\": \"approver\", \"sha256\": "
                          "\"01E388A40ABC135168B7B5CD1DAFDDB61485CCDF98D91DD245C24F209E6C7892\"}]}}")
            << QStringList{u"auth.tokens"_qs, u"lead"_qs, u"example"_qs};
        // Keys whose private halves are committed to this repository (tests/fixtures).
        const QByteArray fixtures = PAYONCE_FIXTURES_DIR;
        QTest::newRow("fixture platform key")
            << "{\"wechat\": {\"platform_keys\": [{\"serial\": \"S1\", \"public_key\": \"" + fixtures
                   + "/notifications/platform_a_pub.pem\"}]}}"
            << QStringList{u"wechat.platform_keys"_qs, u"platform_a_pub.pem"_qs, u"test fixtures"_qs};
        QTest::newRow("fixture merchant key")
            << "{\"wechat\": {\"merchant_private_key\": \"" + fixtures + "/crypto/merchant_key.pem\"}}"
            << QStringList{u"wechat.merchant_private_key"_qs, u"merchant_key.pem"_qs, u"test fixtures"_qs};
        QTest::newRow("fixture alipay key")
            << "{\"alipay\": {\"alipay_public_key\": \"" + fixtures + "/notifications/alipay_pub.pem\"}}"
            << QStringList{u"alipay.alipay_public_key"_qs, u"alipay_pub.pem"_qs, u"test fixtures"_qs};
    }
    void refusesUnsafeSettings()
    {
        QFETCH(QByteArray, config);
        QFETCH(QStringList, mentions);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile file(dir.filePath(QStringLiteral("payonce.json")));
        QVERIFY(QJsonDocument::fromJson(config).isObject());
        QVERIFY(file.open(QIODevice::WriteOnly) && file.write(config) == config.size());
        file.close();
        const Run run = runAgent({QStringLiteral("--config"), file.fileName(), QStringLiteral("--data-dir"),
                                  dir.filePath(QStringLiteral("data"))});
        verifyRefusedBeforeAnythingWasMade(run, mentions, dir.filePath(QStringLiteral("data")));
    }

    // Files that hold secrets (the config file, private keys) readable by others, or any
    // configured file writable by others or the group, are refused at start naming the
    // file, its mode and why. The file under test gets `mode`; every other is 0600.
    void refusesLooseFilePermissions_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("mode");
        QTest::addColumn<QStringList>("mentions");
        QTest::newRow("config readable by others")
            << QStringLiteral("config") << 0644 << QStringList{u"config file"_qs, u"0644"_qs, u"readable by others"_qs};
        QTest::newRow("config writable by its group")
            << QStringLiteral("config") << 0660
            << QStringList{u"config file"_qs, u"0660"_qs, u"writable by its group"_qs};
        QTest::newRow("config writable by others")
            << QStringLiteral("config") << 0602 << QStringList{u"config file"_qs, u"0602"_qs, u"writable by others"_qs};
        QTest::newRow("merchant key readable by others")
            << QStringLiteral("wechat.merchant_private_key") << 0644
            << QStringList{u"wechat.merchant_private_key"_qs, u"0644"_qs, u"readable by others"_qs};
        QTest::newRow("alipay private key readable by others")
            << QStringLiteral("alipay.private_key") << 0604
            << QStringList{u"alipay.private_key"_qs, u"0604"_qs, u"readable by others"_qs};
        QTest::newRow("platform key writable by others")
            << QStringLiteral("wechat.platform_keys") << 0646
            << QStringList{u"wechat.platform_keys"_qs, u"0646"_qs, u"writable by others"_qs};
        QTest::newRow("alipay public key writable by its group")
            << QStringLiteral("alipay.alipay_public_key") << 0664
            << QStringList{u"alipay.alipay_public_key"_qs, u"0664"_qs, u"writable by its group"_qs};
    }
    void refusesLooseFilePermissions()
    {
        QFETCH(QString, key);
        QFETCH(int, mode);
        QFETCH(QStringList, mentions);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString keyPath = dir.filePath(QStringLiteral("key.pem"));
        QJsonObject config;
        if (key == u"wechat.merchant_private_key")
            config.insert(QStringLiteral("wechat"), QJsonObject{{QStringLiteral("merchant_private_key"), keyPath}});
        else if (key == u"wechat.platform_keys")
            config.insert(QStringLiteral("wechat"),
                          QJsonObject{{QStringLiteral("platform_keys"),
                                       QJsonArray{QJsonObject{{QStringLiteral("serial"), QStringLiteral("S1")},
                                                              {QStringLiteral("public_key"), keyPath}}}}});
        else if (key == u"alipay.private_key")
            config.insert(QStringLiteral("alipay"), QJsonObject{{QStringLiteral("private_key"), keyPath}});
        else if (key == u"alipay.alipay_public_key")
            config.insert(QStringLiteral("alipay"), QJsonObject{{QStringLiteral("alipay_public_key"), keyPath}});
        if (key != u"config") {
            QVERIFY(writeFile(keyPath, "not read: refused before", mode_t(mode)));
            mentions << keyPath;
        }
        const QString configPath = dir.filePath(QStringLiteral("payonce.json"));
        QVERIFY(writeFile(configPath, QJsonDocument(config).toJson(), key == u"config" ? mode_t(mode) : 0600));
        if (key == u"config")
            mentions << configPath;
        const Run run = runAgent({QStringLiteral("--config"), configPath, QStringLiteral("--data-dir"),
                                  dir.filePath(QStringLiteral("data")), QStringLiteral("--listen"),
                                  QStringLiteral("127.0.0.1:%1").arg(freeLoopbackPort())});
        verifyRefusedBeforeAnythingWasMade(run, mentions, dir.filePath(QStringLiteral("data")));
    }

    // What a Debian package installs: the config root:payonce 0640, a public key 0644.
    void startsWithGroupReadableConfigAndPublicKeys()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString keyPath = dir.filePath(QStringLiteral("alipay-public.pem"));
        QVERIFY(writeFile(keyPath, "alipay is not configured: never read", 0644));
        const QString configPath = dir.filePath(QStringLiteral("payonce.json"));
        const QJsonObject config{
            {QStringLiteral("alipay"), QJsonObject{{QStringLiteral("alipay_public_key"), keyPath}}}};
        QVERIFY(writeFile(configPath, QJsonDocument(config).toJson(), 0640));
        const Run run = runAgent({QStringLiteral("--config"), configPath, QStringLiteral("--data-dir"),
                                  dir.filePath(QStringLiteral("data")), QStringLiteral("--listen"),
                                  QStringLiteral("127.0.0.1:%1").arg(freeLoopbackPort()),
                                  QStringLiteral("--list-routes")});
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(run)));
    }

    void refusesEmbeddedKeyStoreForSeveralInstances()
    {
        const Run run = runAgent({QStringLiteral("--db"), m_postgres->url(), QStringLiteral("--instances"),
                                  QStringLiteral("3"), QStringLiteral("--redis"), QStringLiteral("embedded")});
        QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(run)));
        QVERIFY2(run.stderrLines.size() == 1 && run.stderrLines.first().contains(u"single instance")
                     && run.stderrLines.first().contains(u"--instances"),
                 qPrintable(describe(run)));
    }

    // Redis is an accelerator: an unreachable one at start is logged as degraded and the
    // agent comes up anyway (docs/design.md rule 5).
    void startsDegradedWithoutRedis()
    {
        QTemporaryDir workDir;
        QProcess agent;
        agent.setWorkingDirectory(workDir.path());
        agent.setProcessChannelMode(QProcess::MergedChannels);
        agent.start(QStringLiteral(PAYONCE_AGENT_PATH),
                    {QStringLiteral("--db"), m_postgres->url(), QStringLiteral("--redis"),
                     QStringLiteral("redis://127.0.0.1:%1/0").arg(freeLoopbackPort()),
                     QStringLiteral("--redis-timeout-ms"), QStringLiteral("500")});
        QVERIFY(agent.waitForStarted());
        QByteArray log;
        while (!log.contains("ready")) {
            QVERIFY2(agent.waitForReadyRead(30000), log.constData());
            log += agent.readAll();
        }
        QVERIFY2(log.contains("running degraded") && log.contains(", degraded"), log.constData());
        agent.terminate();
        QVERIFY(agent.waitForFinished(30000));
        QCOMPARE(agent.exitCode(), 0);
    }

    void startsMigratesAndStopsOnSigterm()
    {
        QTemporaryDir workDir;
        QProcess agent;
        agent.setWorkingDirectory(workDir.path());
        agent.setProcessChannelMode(QProcess::MergedChannels); // the log is on stderr
        agent.start(QStringLiteral(PAYONCE_AGENT_PATH), {QStringLiteral("--db"), m_postgres->url()});
        QVERIFY(agent.waitForStarted());
        QByteArray log;
        while (!log.contains("ready")) {
            QVERIFY2(agent.waitForReadyRead(30000), log.constData());
            log += agent.readAll();
        }
        QVERIFY2(!log.contains(m_postgres->password().toUtf8()), "the password reached the log");
        agent.terminate();
        QVERIFY(agent.waitForFinished(30000));
        log += agent.readAll();
        // The whole log on failure: a crash at shutdown was seen once in CI (not reproduced
        // in 65 runs here), and its last lines are what tells where.
        QVERIFY2(agent.exitStatus() == QProcess::NormalExit, log.right(4000).constData());
        QCOMPARE(agent.exitCode(), 0);
    }

    // The database holds every order and payment: a fresh SQLite file is the agent's
    // user's alone, whatever the umask, and so are the WAL and shared-memory files beside it.
    void createsTheSqliteDatabaseOwnerOnly()
    {
        QTemporaryDir workDir;
        const QString path = workDir.filePath(QStringLiteral("data/payonce.db"));
        const mode_t previous = ::umask(022); // the usual one: files 0644 unless the agent says otherwise
        QProcess agent;
        agent.setWorkingDirectory(workDir.path());
        agent.setProcessChannelMode(QProcess::MergedChannels);
        agent.start(QStringLiteral(PAYONCE_AGENT_PATH),
                    {QStringLiteral("--db"), QStringLiteral("sqlite:") + path, QStringLiteral("--listen"),
                     QStringLiteral("127.0.0.1:%1").arg(freeLoopbackPort())});
        ::umask(previous);
        QVERIFY(agent.waitForStarted());
        QByteArray log;
        while (!log.contains("ready on")) {
            QVERIFY2(agent.waitForReadyRead(30000), log.constData());
            log += agent.readAll();
        }
        const QFileDevice::Permissions ownerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
        QVERIFY2(QFile::exists(path), qPrintable(path));
        QStringList checked;
        for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")}) {
            const QFileInfo file(path + suffix);
            if (!file.exists())
                continue;
            // Qt reports the owner's bits twice (ReadOwner and ReadUser for the process's own files).
            const QFileDevice::Permissions bits =
                file.permissions() & ~(QFileDevice::ReadUser | QFileDevice::WriteUser | QFileDevice::ExeUser);
            QVERIFY2(
                bits == ownerOnly,
                qPrintable(
                    QStringLiteral("%1: permissions 0x%2").arg(file.fileName()).arg(int(file.permissions()), 0, 16)));
            checked << file.fileName();
        }
        QVERIFY2(checked.size() == 3, qPrintable(checked.join(u' '))); // WAL mode: all three are there while it runs
        agent.terminate();
        QVERIFY(agent.waitForFinished(30000));
        QCOMPARE(agent.exitCode(), 0);
    }

private:
    std::unique_ptr<PostgresServer> m_postgres;
    std::unique_ptr<MariaDbServer> m_mariadb;
    QTcpServer m_silent;
};

QTEST_GUILESS_MAIN(TestAgentStartup)
#include "tst_agentstartup.moc"
