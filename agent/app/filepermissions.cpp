#include "filepermissions.h"

#include <QFile>
#include <QList>

#include <sys/stat.h>

namespace payonce::app {

namespace {

using core::Error;
using core::ErrorCode;

enum class Holds {
    Secrets,
    TrustedKey
};

struct NamedFile {
    QString setting; ///< "config file", "wechat.merchant_private_key", …
    QString path;
    Holds holds;
};

/// What is wrong with `mode` for a file holding `holds`; empty when nothing is.
QString looseness(mode_t mode, Holds holds)
{
    if (mode & S_IWOTH)
        return QStringLiteral("writable by others");
    if (mode & S_IWGRP)
        return QStringLiteral("writable by its group");
    if (holds == Holds::Secrets && (mode & S_IROTH))
        return QStringLiteral("readable by others");
    return {};
}

core::Result<void> checkFile(const NamedFile &file)
{
    if (file.path.isEmpty())
        return {};
    struct stat status {};
    if (::stat(QFile::encodeName(file.path).constData(), &status) != 0)
        return {}; // absent or unreadable: whoever reads it says so
    const mode_t mode = status.st_mode & 07777;
    const QString what = looseness(mode, file.holds);
    if (what.isEmpty())
        return {};
    const QString remedy = file.holds == Holds::Secrets
                               ? QStringLiteral("it holds secrets: chmod 0600, or 0640 with the agent's group")
                               : QStringLiteral("whoever can write it decides which signatures the agent trusts: "
                                                "chmod 0644");
    return Error::make(ErrorCode::Misconfigured, QStringLiteral("%1 %2: mode %3, %4; %5")
                                                     .arg(file.setting, file.path)
                                                     .arg(mode, 4, 8, QLatin1Char('0'))
                                                     .arg(what, remedy));
}

} // namespace

core::Result<void> checkFilePermissions(const config::Config &config)
{
    QList<NamedFile> files{
        {QStringLiteral("config file"), config.configFile, Holds::Secrets},
        {QStringLiteral("wechat.merchant_private_key"), config.wechat.merchantPrivateKeyPath, Holds::Secrets},
        {QStringLiteral("alipay.private_key"), config.alipay.privateKeyPath, Holds::Secrets},
        {QStringLiteral("alipay.alipay_public_key"), config.alipay.alipayPublicKeyPath, Holds::TrustedKey},
    };
    for (const config::PlatformKey &platform : config.wechat.platformKeys)
        files.append({QStringLiteral("wechat.platform_keys"), platform.publicKeyPath, Holds::TrustedKey});
    for (const NamedFile &file : std::as_const(files)) {
        if (auto checked = checkFile(file); !checked)
            return checked;
    }
    return {};
}

} // namespace payonce::app
