#include "simprocess.h"

#include "support/serverharness.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QRandomGenerator>

namespace payonce::testsupport {

namespace {
const QString kMchId = QStringLiteral("1900000001");
const QString kAppId = QStringLiteral("wx0000000000000000");
const QString kSerial = QStringLiteral("PAYONCE_SIM_0001");

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

std::unique_ptr<SimProcess> SimProcess::start(QString *error)
{
    std::unique_ptr<SimProcess> sim(new SimProcess);
    const QString merchant = sim->m_dir.filePath(QStringLiteral("merchant.pem"));
    const QString merchantPublic = sim->m_dir.filePath(QStringLiteral("merchant_public.pem"));
    if (!runOpenssl({QStringLiteral("genrsa"), QStringLiteral("-out"), merchant, QStringLiteral("2048")}, error)
        || !runOpenssl({QStringLiteral("rsa"), QStringLiteral("-in"), merchant, QStringLiteral("-pubout"),
                        QStringLiteral("-out"), merchantPublic},
                       error))
        return nullptr;
    for (int i = 0; i < 32; ++i)
        sim->m_apiv3Key += char('a' + QRandomGenerator::global()->bounded(26));
    sim->m_port = freeLoopbackPort();
    const QString platformKey = sim->m_dir.filePath(QStringLiteral("platform_public.pem"));
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY"), QString::fromLatin1(sim->m_apiv3Key));
    sim->m_process.setProcessEnvironment(environment);
    sim->m_process.setProcessChannelMode(QProcess::ForwardedChannels);
    sim->m_process.start(QStringLiteral(PAYONCE_SIM_PATH),
                         {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(sim->m_port),
                          QStringLiteral("--merchant-public-key"), merchantPublic, QStringLiteral("--mchid"), kMchId,
                          QStringLiteral("--appid"), kAppId, QStringLiteral("--alipay-app-id"),
                          QStringLiteral("2021000000000000"), QStringLiteral("--alipay-seller-id"),
                          QStringLiteral("2088000000000000"), QStringLiteral("--platform-serial"), kSerial,
                          QStringLiteral("--platform-key-out"), platformKey, QStringLiteral("--exit-with-parent")});
    QElapsedTimer waited;
    waited.start();
    while (!QFileInfo::exists(platformKey)) {
        if (sim->m_process.state() == QProcess::NotRunning || waited.elapsed() > 20000) {
            *error = QStringLiteral("payonce-sim did not start");
            return nullptr;
        }
        sim->m_process.waitForFinished(50);
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
        return true;
    m_process.terminate();
    return m_process.waitForFinished(10000);
}

QString SimProcess::baseUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

QJsonObject SimProcess::weChatConfig() const
{
    return QJsonObject{
        {QStringLiteral("mchid"), kMchId},
        {QStringLiteral("appid"), kAppId},
        {QStringLiteral("apiv3_key"), QString::fromLatin1(m_apiv3Key)},
        {QStringLiteral("merchant_private_key"), m_dir.filePath(QStringLiteral("merchant.pem"))},
        {QStringLiteral("merchant_serial"), QStringLiteral("PAYONCE_TEST_MERCHANT")},
        {QStringLiteral("platform_keys"),
         QJsonArray{
             QJsonObject{{QStringLiteral("serial"), kSerial},
                         {QStringLiteral("public_key"), m_dir.filePath(QStringLiteral("platform_public.pem"))}}}},
        {QStringLiteral("base_url"), baseUrl()},
    };
}

} // namespace payonce::testsupport
