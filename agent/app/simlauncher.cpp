#include "simlauncher.h"

#include "crypto/rsakeys.h"
#include "crypto/securerandom.h"
#include "logging/categories.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QThread>

namespace payonce::app {

using core::Error;
using core::ErrorCode;

namespace {

const QString kSimSerial = QStringLiteral("PAYONCE_SIM_0001");

/// payonce-sim beside the agent (installed), or in the build tree's agent/sim, or on PATH.
QString findSimBinary()
{
    const QString override = qEnvironmentVariable("PAYONCE_SIM_BINARY");
    if (!override.isEmpty())
        return override;
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString &candidate :
         {here.filePath(QStringLiteral("payonce-sim")), here.filePath(QStringLiteral("../sim/payonce-sim"))}) {
        if (QFileInfo(candidate).isExecutable())
            return QFileInfo(candidate).canonicalFilePath();
    }
    return QStandardPaths::findExecutable(QStringLiteral("payonce-sim"));
}

core::Result<void> writeFile(const QString &path, const QByteArray &bytes, QFile::Permissions permissions)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    file.setPermissions(permissions);
    return {};
}

/// The demo's merchant identity: made once per data folder and reused, so a restarted
/// demo keeps talking to a simulator that knows its public key.
core::Result<void> ensureDemoMerchant(config::Config &config, const QString &folder)
{
    const QString keyPath = QDir(folder).filePath(QStringLiteral("merchant.pem"));
    if (!QFileInfo::exists(keyPath)) {
        auto key = crypto::generateRsaKey(2048);
        if (!key)
            return key.error();
        auto pem = key->toPem();
        if (!pem)
            return pem.error();
        if (auto written = writeFile(keyPath, *pem, QFile::ReadOwner | QFile::WriteOwner); !written)
            return written;
    }
    config::WeChatSettings &wechat = config.wechat;
    if (wechat.merchantPrivateKeyPath.isEmpty()) {
        wechat.merchantPrivateKeyPath = keyPath;
        if (wechat.mchid.isEmpty())
            wechat.mchid = QStringLiteral("1900000001");
        if (wechat.appid.isEmpty())
            wechat.appid = QStringLiteral("wx0000000000000000");
        if (wechat.merchantSerial.isEmpty())
            wechat.merchantSerial = QStringLiteral("PAYONCE_DEMO_MERCHANT");
        if (wechat.apiv3Key.isEmpty()) {
            auto apiv3 = crypto::randomHex(16); // 32 ASCII characters, as WeChat's APIv3 key
            if (!apiv3)
                return apiv3.error();
            wechat.apiv3Key = config::Secret(*apiv3);
        }
    }
    config::AlipaySettings &alipay = config.alipay;
    if (alipay.privateKeyPath.isEmpty()) {
        alipay.privateKeyPath = keyPath;
        if (alipay.appId.isEmpty())
            alipay.appId = QStringLiteral("2021000000000000");
        if (alipay.sellerId.isEmpty())
            alipay.sellerId = QStringLiteral("2088000000000000");
    }
    return {};
}

/// The public halves of the merchant's and the Alipay app's keys, written for the simulator
/// (which verifies our requests with them): their paths, merchant's first.
core::Result<std::pair<QString, QString>> writePublicKeys(const config::Config &config, const QString &folder)
{
    // The simulator verifies our requests with the merchant's public key.
    auto merchantKey = crypto::PrivateKey::fromFile(config.wechat.merchantPrivateKeyPath);
    if (!merchantKey)
        return merchantKey.error();
    auto merchantPublic = merchantKey->publicKey().toPem();
    if (!merchantPublic)
        return merchantPublic.error();
    const QString merchantPublicPath = QDir(folder).filePath(QStringLiteral("merchant_public.pem"));
    if (auto written = writeFile(merchantPublicPath, *merchantPublic, QFile::ReadOwner | QFile::WriteOwner); !written)
        return written.error();
    QString appPublicPath = merchantPublicPath;
    if (config.alipay.privateKeyPath != config.wechat.merchantPrivateKeyPath) {
        auto appKey = crypto::PrivateKey::fromFile(config.alipay.privateKeyPath, crypto::KeyEncoding::PemOrBareBase64);
        if (!appKey)
            return appKey.error();
        auto appPublic = appKey->publicKey().toPem();
        if (!appPublic)
            return appPublic.error();
        appPublicPath = QDir(folder).filePath(QStringLiteral("alipay_app_public.pem"));
        if (auto written = writeFile(appPublicPath, *appPublic, QFile::ReadOwner | QFile::WriteOwner); !written)
            return written.error();
    }

    return std::pair{merchantPublicPath, appPublicPath};
}

/// Until the simulator has written its platform key (it does once it listens).
core::Result<void> waitUntilListening(QProcess &process, const QString &platformKeyPath, const config::Config &config)
{
    QElapsedTimer waited;
    waited.start();
    while (!QFileInfo::exists(platformKeyPath)) {
        if (process.state() == QProcess::NotRunning) {
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("payonce-sim exited with code %1 before listening on %2")
                                   .arg(process.exitCode())
                                   .arg(config.sim.listen.toString()));
        }
        if (waited.elapsed() > 15000)
            return Error::make(ErrorCode::Unavailable, QStringLiteral("payonce-sim did not listen within 15 s"));
        process.waitForFinished(50);
    }
    return {};
}

} // namespace

core::Result<std::unique_ptr<SimLauncher>> SimLauncher::start(config::Config &config)
{
    const QString binary = findSimBinary();
    if (binary.isEmpty())
        return Error::make(
            ErrorCode::Misconfigured,
            QStringLiteral("sim.enabled is set but payonce-sim was not found beside the agent or on PATH"));
    const QString folder = QDir(config.dataDir).absoluteFilePath(QStringLiteral("sim"));
    if (!QDir().mkpath(folder))
        return Error::make(ErrorCode::Misconfigured, QStringLiteral("cannot create %1").arg(folder));
    if (auto merchant = ensureDemoMerchant(config, folder); !merchant)
        return merchant.error();

    auto publicKeys = writePublicKeys(config, folder);
    if (!publicKeys)
        return publicKeys.error();
    const auto &[merchantPublicPath, appPublicPath] = publicKeys.value();

    // The simulator writes its platform key here once it listens: the file means "ready".
    const QString platformKeyPath = QDir(folder).filePath(QStringLiteral("platform_public.pem"));
    QFile::remove(platformKeyPath);

    std::unique_ptr<SimLauncher> launcher(new SimLauncher);
    launcher->m_process = std::make_unique<QProcess>();
    QProcess &process = *launcher->m_process;
    process.setProcessChannelMode(QProcess::ForwardedChannels);
    // The APIv3 key (the simulator encrypts WeChat notification resources with it) goes
    // through the child's environment, never a flag: flags are visible in ps.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (config.wechat.apiv3Key.isEmpty())
        environment.remove(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY"));
    else
        environment.insert(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY"), config.wechat.apiv3Key.reveal());
    process.setProcessEnvironment(environment);
    process.start(binary,
                  {QStringLiteral("--listen"), config.sim.listen.toString(), QStringLiteral("--merchant-public-key"),
                   merchantPublicPath, QStringLiteral("--alipay-app-public-key"), appPublicPath,
                   QStringLiteral("--mchid"), config.wechat.mchid, QStringLiteral("--appid"), config.wechat.appid,
                   QStringLiteral("--alipay-app-id"), config.alipay.appId, QStringLiteral("--alipay-seller-id"),
                   config.alipay.sellerId, QStringLiteral("--platform-serial"), kSimSerial,
                   QStringLiteral("--platform-key-out"), platformKeyPath, QStringLiteral("--exit-with-parent")});
    if (!process.waitForStarted(10000))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("cannot start %1: %2").arg(binary, process.errorString()));
    if (auto listening = waitUntilListening(process, platformKeyPath, config); !listening)
        return listening.error();
    QFile platformKey(platformKeyPath);
    if (!platformKey.open(QIODevice::ReadOnly))
        return Error::make(ErrorCode::Internal, QStringLiteral("cannot read %1").arg(platformKeyPath));
    launcher->m_platform = Platform{QStringLiteral("http://") + config.sim.listen.toString(), kSimSerial,
                                    platformKey.readAll()};
    // Alipay verifies responses with "the Alipay public key": here, the simulator's.
    if (config.alipay.alipayPublicKeyPath.isEmpty())
        config.alipay.alipayPublicKeyPath = platformKeyPath;
    qCInfo(lcApp).noquote() << QStringLiteral("payonce-sim started on %1 (pid %2)")
                                   .arg(config.sim.listen.toString())
                                   .arg(process.processId());
    return launcher;
}

SimLauncher::~SimLauncher()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->terminate();
        if (!m_process->waitForFinished(5000)) {
            m_process->kill();
            m_process->waitForFinished(2000);
        }
    }
}

} // namespace payonce::app
