#include "startupsafety.h"

#include "filepermissions.h"

#include "crypto/rsakeys.h"
#include "logging/categories.h"

#include <QCryptographicHash>
#include <QHostAddress>
#include <QUrl>

#include <array>

namespace payonce::app {

namespace {

using core::Error;
using core::ErrorCode;

bool isLoopbackHost(const QString &name)
{
    if (name.compare(QStringLiteral("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress host(name);
    return !host.isNull() && host.isLoopback();
}

bool isLoopback(const config::HostPort &address)
{
    return isLoopbackHost(address.host);
}

/// A payonce-sim on this machine: plain http on a loopback address. The real platforms
/// are https on public addresses, so nothing configured for them passes.
bool isSimulatedPlatform(const QString &baseUrl)
{
    const QUrl url(baseUrl);
    return url.isValid() && url.scheme() == u"http" && isLoopbackHost(url.host());
}

struct ExampleToken {
    const char *token;
    const char *sha256;
};

// The SHA-256 of each token resources/payonce.example.json ships with.
constexpr std::array kExampleTokens{
    ExampleToken{"example-desk-token", "e34eae51aad85aff8de66fdfd39c1a297d1f14d5db6781e9227c023ed9c9d0b4"},
    ExampleToken{"example-lead-token", "01e388a40abc135168b7b5cd1dafddb61485ccdf98d91dd245c24f209e6c7892"},
};

// SHA-256 of the DER SubjectPublicKeyInfo of every key pair in tests/fixtures (crypto/:
// merchant, platform; notifications/: platform_a, platform_b, platform_x, alipay,
// alipay_forger): `openssl pkey -pubin -in X_pub.pem -outform DER | sha256sum`.
constexpr std::array kFixtureKeys{
    "c037d23403ed4b066b861edeb9c239cf1a06a46a25e43b5ddc0119bb852bbfe2",
    "7c205e8ef29387eb68cd9908b398dc6205598400d3610f07c7a5fc85e2b6f67b",
    "10eeefc2bb87cf788f655afc0e3b9acd9202e0419b9d374d9e6308c57d322715",
    "ff5a39744ceaa4f4a38d9657d91b294be73fcce2a58009d06f06b9edadce9ba6",
    "40fbdc716c4718bf43754faa4ca96f4b7bd3f23ce7712124aab0d3b67cef00b6",
    "ed5c39206e5375b1134657d6758792e43a5016842c05c35c31c8f6ab565dec17",
    "8b552546465ee30b457fe80106c301a7d0207f3c5e4a67159adb504c66883acf",
};

/// The hex SHA-256 of a public key's DER form (its PEM body, base64-decoded); empty when
/// it cannot be written.
QByteArray fingerprint(const crypto::PublicKey &key)
{
    const auto pem = key.toPem();
    if (!pem)
        return {};
    QByteArray base64;
    for (const QByteArray &line : pem.value().split('\n')) {
        if (!line.startsWith("-----"))
            base64 += line.trimmed();
    }
    return QCryptographicHash::hash(QByteArray::fromBase64(base64), QCryptographicHash::Sha256).toHex();
}

/// A key file's public key fingerprint, the private key's public half for a private one;
/// empty when the file is absent or not a key (the gateways report that themselves).
QByteArray fingerprintOfFile(const QString &path, bool isPrivate)
{
    if (path.isEmpty())
        return {};
    if (isPrivate) {
        const auto key = crypto::PrivateKey::fromFile(path);
        return key ? fingerprint(key.value().publicKey()) : QByteArray();
    }
    const auto key = crypto::PublicKey::fromFile(path);
    return key ? fingerprint(key.value()) : QByteArray();
}

core::Result<void> checkKeysAreNotFixtures(const config::Config &config)
{
    struct KeyFile {
        QString key;
        QString path;
        bool isPrivate;
    };
    QList<KeyFile> files{{QStringLiteral("wechat.merchant_private_key"), config.wechat.merchantPrivateKeyPath, true},
                         {QStringLiteral("alipay.private_key"), config.alipay.privateKeyPath, true},
                         {QStringLiteral("alipay.alipay_public_key"), config.alipay.alipayPublicKeyPath, false}};
    for (const config::PlatformKey &platform : config.wechat.platformKeys)
        files.append({QStringLiteral("wechat.platform_keys"), platform.publicKeyPath, false});
    const bool allowed = qEnvironmentVariable("PAYONCE_ALLOW_REPOSITORY_TEST_KEYS") == u"1";
    for (const KeyFile &file : std::as_const(files)) {
        const QByteArray print = fingerprintOfFile(file.path, file.isPrivate);
        if (print.isEmpty() || std::find(kFixtureKeys.begin(), kFixtureKeys.end(), print) == kFixtureKeys.end())
            continue;
        const QString what = QStringLiteral("%1: %2 is a key of payonce's test fixtures, whose private half is "
                                            "public in the repository")
                                 .arg(file.key, file.path);
        if (!allowed)
            return Error::make(ErrorCode::Misconfigured, what + QStringLiteral("; use the platform's real key"));
        qCWarning(lcApp).noquote() << what << "(allowed: PAYONCE_ALLOW_REPOSITORY_TEST_KEYS=1)";
    }
    return {};
}

/// The QA runner's own credential: set, and an operator token of this agent, so that its
/// set-up calls are audited under a name of its own and a caller's token never travels.
core::Result<void> checkQaCredential(const config::Config &config)
{
    if (!config.qa.enabled)
        return {};
    if (config.qa.token.isEmpty())
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("qa.token: qa.enabled needs a token of its own for the set-up calls to its "
                                          "targets (a caller's token is never forwarded); make one (openssl rand -hex "
                                          "32), give it as PAYONCE_QA_TOKEN and its SHA-256 in auth.tokens with role "
                                          "operator"));
    const QString hash = QString::fromLatin1(
        QCryptographicHash::hash(config.qa.token.reveal().toUtf8(), QCryptographicHash::Sha256).toHex());
    for (const config::AuthToken &token : config.authTokens) {
        if (token.sha256.reveal().trimmed().toLower() != hash)
            continue;
        if (token.role == u"operator")
            return {};
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("qa.token: it is the auth.tokens entry \"%1\" with role %2; QA's set-up "
                                          "needs operator, and no more")
                               .arg(token.name, token.role));
    }
    return Error::make(ErrorCode::Misconfigured,
                       QStringLiteral("qa.token: its SHA-256 is in no auth.tokens entry; add one with role operator "
                                      "(here and on every qa.peers agent)"));
}

} // namespace

core::Result<void> checkSafeToStart(const config::Config &config)
{
    if (config.sim.enabled && !isLoopback(config.listen))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("sim.enabled: the agent trusts the simulator's signing key, so it only runs "
                                          "with the agent on a loopback address; listen is %1")
                               .arg(config.listen.toString()));
    if (config.sim.enabled && !isLoopback(config.sim.listen))
        return Error::make(ErrorCode::Misconfigured,
                           QStringLiteral("sim.listen: %1 is not a loopback address; whoever reaches the simulator "
                                          "can pay any order")
                               .arg(config.sim.listen.toString()));
    if (config.qa.enabled && !isLoopback(config.listen))
        return Error::make(
            ErrorCode::Misconfigured,
            QStringLiteral("qa.enabled: QA scenarios switch the duplicate defences off, so they only run "
                           "with the agent on a loopback address; listen is %1")
                .arg(config.listen.toString()));
    if (config.qa.enabled && !config.sim.enabled && !isSimulatedPlatform(config.wechat.baseUrl))
        return Error::make(
            ErrorCode::Misconfigured,
            QStringLiteral("qa.enabled: QA scenarios pay, notify and inject faults through the simulator, "
                           "and without one they would drive the platform at wechat.base_url %1; set "
                           "sim.enabled, or point wechat.base_url at a payonce-sim on a loopback address "
                           "(http://127.0.0.1:PORT)")
                .arg(config.wechat.baseUrl));
    for (const QString &peer : config.qa.peers) {
        if (config.qa.enabled && !isLoopbackHost(QUrl(peer).host()))
            return Error::make(ErrorCode::Misconfigured,
                               QStringLiteral("qa.peers: %1 is not on a loopback address; QA scenarios storm their "
                                              "targets with duplicates, so they stay on this machine")
                                   .arg(peer));
    }
    if (auto credential = checkQaCredential(config); !credential)
        return credential;
    for (const config::AuthToken &token : config.authTokens) {
        const QString hash = token.sha256.reveal().trimmed().toLower();
        for (const ExampleToken &example : kExampleTokens) {
            if (hash == QLatin1String(example.sha256))
                return Error::make(ErrorCode::Misconfigured,
                                   QStringLiteral("auth.tokens: \"%1\" is the example config's token %2, which anyone "
                                                  "can read in the repository; make one of your own (openssl rand "
                                                  "-hex 32) and give its SHA-256")
                                       .arg(token.name, QLatin1String(example.token)));
        }
    }
    if (auto keys = checkKeysAreNotFixtures(config); !keys)
        return keys;
    return checkFilePermissions(config);
}

} // namespace payonce::app
