#include "simprocess.h"

#include "agentprocess.h"
#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>

namespace payonce::testsupport {

namespace {

bool runOpenssl(const QStringList &arguments, QString *error)
{
    QProcess openssl;
    openssl.setProcessChannelMode(QProcess::MergedChannels);
    openssl.start(QStringLiteral("openssl"), arguments);
    if (!openssl.waitForFinished(60000) || openssl.exitCode() != 0) {
        *error = QStringLiteral("openssl %1: %2").arg(arguments.join(u' '), QString::fromUtf8(openssl.readAll()));
        return false;
    }
    return true;
}

} // namespace

std::unique_ptr<SimProcess> SimProcess::start(const Options &options, QString *error)
{
    std::unique_ptr<SimProcess> sim(new SimProcess);
    if (!sim->m_dir.isValid()) {
        *error = QStringLiteral("no temporary folder for payonce-sim");
        return nullptr;
    }
    QString merchantPublic = options.merchantPublicKey;
    if (merchantPublic.isEmpty()) {
        const QString merchant = sim->m_dir.filePath(QStringLiteral("merchant.pem"));
        merchantPublic = sim->m_dir.filePath(QStringLiteral("merchant_public.pem"));
        if (!runOpenssl({QStringLiteral("genrsa"), QStringLiteral("-out"), merchant, QStringLiteral("2048")}, error)
            || !runOpenssl({QStringLiteral("rsa"), QStringLiteral("-in"), merchant, QStringLiteral("-pubout"),
                            QStringLiteral("-out"), merchantPublic},
                           error))
            return nullptr;
    }
    sim->m_merchantId = options.mchId;
    sim->m_appId = options.appId;
    sim->m_platformSerial = options.platformSerial;
    sim->m_apiv3Key = options.apiv3Key;
    if (sim->m_apiv3Key.isEmpty()) {
        for (int i = 0; i < 32; ++i)
            sim->m_apiv3Key += char('a' + QRandomGenerator::global()->bounded(26));
    }
    sim->m_port = freeLoopbackPort();
    QStringList arguments{QStringLiteral("--listen"),
                          QStringLiteral("127.0.0.1:%1").arg(sim->m_port),
                          QStringLiteral("--merchant-public-key"),
                          merchantPublic,
                          QStringLiteral("--mchid"),
                          options.mchId,
                          QStringLiteral("--appid"),
                          options.appId,
                          QStringLiteral("--alipay-app-id"),
                          options.alipayAppId,
                          QStringLiteral("--platform-key-out"),
                          sim->platformKeyPath(),
                          QStringLiteral("--exit-with-parent")};
    if (!options.alipaySellerId.isEmpty())
        arguments << QStringLiteral("--alipay-seller-id") << options.alipaySellerId;
    if (!options.platformSerial.isEmpty())
        arguments << QStringLiteral("--platform-serial") << options.platformSerial;
    // The APIv3 key through the environment, as the agent's SimLauncher passes it.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY"), QString::fromLatin1(sim->m_apiv3Key));
    sim->m_process.setProcessEnvironment(environment);
    sim->m_process.setProcessChannelMode(QProcess::ForwardedChannels);
    sim->m_process.start(QStringLiteral(PAYONCE_SIM_PATH), arguments);
    QElapsedTimer waited;
    waited.start();
    // The key file is written (atomically) only once the server listens.
    while (!QFileInfo::exists(sim->platformKeyPath())) {
        if (sim->m_process.state() == QProcess::NotRunning || waited.elapsed() > 30000) {
            *error = sim->m_process.state() == QProcess::NotRunning
                         ? QStringLiteral("payonce-sim ended before it listened (exit code %1): %2")
                               .arg(sim->m_process.exitCode())
                               .arg(sim->m_process.errorString())
                         : QStringLiteral("payonce-sim not listening after 30 s");
            return nullptr;
        }
        sim->m_process.waitForFinished(50);
    }
    if (!sim->platformKeyPem().startsWith("-----BEGIN PUBLIC KEY-----")) {
        *error = QStringLiteral("payonce-sim wrote no public key to %1").arg(sim->platformKeyPath());
        return nullptr;
    }
    return sim;
}

SimProcess::~SimProcess()
{
    stop();
}

bool SimProcess::stop()
{
    if (m_process.state() == QProcess::NotRunning)
        return m_process.exitStatus() == QProcess::NormalExit && m_process.exitCode() == 0;
    m_process.terminate(); // SIGTERM: it must end cleanly
    if (!m_process.waitForFinished(10000)) {
        m_process.kill();
        m_process.waitForFinished();
        return false;
    }
    return m_process.exitStatus() == QProcess::NormalExit && m_process.exitCode() == 0;
}

QString SimProcess::platformKeyPath() const
{
    return m_dir.filePath(QStringLiteral("platform_public.pem"));
}

QByteArray SimProcess::platformKeyPem() const
{
    QFile key(platformKeyPath());
    return key.open(QIODevice::ReadOnly) ? key.readAll() : QByteArray();
}

QJsonObject SimProcess::control(const QByteArray &method, const QString &path, const QJsonObject &body) const
{
    const QByteArray payload = method == "GET" ? QByteArray() : QJsonDocument(body).toJson(QJsonDocument::Compact);
    const HttpAnswer answer = httpCall(m_port, method, path, payload, {});
    if (answer.status <= 0)
        qWarning("payonce-sim control %s %s: no answer", method.constData(), qPrintable(path));
    return answer.json();
}

QString SimProcess::baseUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

QJsonObject SimProcess::weChatConfig() const
{
    return QJsonObject{
        {QStringLiteral("mchid"), m_merchantId},
        {QStringLiteral("appid"), m_appId},
        {QStringLiteral("apiv3_key"), QString::fromLatin1(m_apiv3Key)},
        {QStringLiteral("merchant_private_key"), m_dir.filePath(QStringLiteral("merchant.pem"))},
        {QStringLiteral("merchant_serial"), QStringLiteral("PAYONCE_TEST_MERCHANT")},
        {QStringLiteral("platform_keys"), QJsonArray{QJsonObject{{QStringLiteral("serial"), m_platformSerial},
                                                                 {QStringLiteral("public_key"), platformKeyPath()}}}},
        {QStringLiteral("base_url"), baseUrl()},
    };
}

} // namespace payonce::testsupport
