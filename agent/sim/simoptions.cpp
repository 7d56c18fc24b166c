#include "simoptions.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::sim {

using core::Error;
using core::ErrorCode;

namespace {

Error misconfigured(const QString &text)
{
    return Error::make(ErrorCode::Misconfigured, text);
}

core::Result<void> parseListen(const QString &text, SimOptions *options, const QString &source)
{
    const qsizetype colon = text.lastIndexOf(u':');
    bool ok = false;
    const int port = colon > 0 ? text.mid(colon + 1).toInt(&ok) : 0;
    QHostAddress address(colon > 0 ? text.left(colon) : QString());
    if (!ok || port < 0 || port > 65535 || address.isNull())
        return misconfigured(
            QStringLiteral("%1: expected HOST:PORT with a numeric address, got \"%2\"").arg(source, text));
    options->address = address;
    options->port = static_cast<quint16>(port);
    return {};
}

QString resolve(const QString &base, const QString &path)
{
    return QFileInfo(path).isAbsolute() || base.isEmpty() ? path : QDir(base).filePath(path);
}

// A public key from a public PEM, or the public half of a private PEM.
core::Result<crypto::PublicKey> publicKeyFrom(const QString &publicPath, const QString &privatePath,
                                              const QString &source)
{
    if (!publicPath.isEmpty()) {
        auto key = crypto::PublicKey::fromFile(publicPath);
        if (!key)
            return misconfigured(source + QStringLiteral(": ") + key.error().internalMessage);
        return *key;
    }
    auto key = crypto::PrivateKey::fromFile(privatePath);
    if (!key)
        return misconfigured(source + QStringLiteral(": ") + key.error().internalMessage);
    return key->publicKey();
}

/// The command line's options, each once (the parser keeps copies; isSet/value ask by them).
struct SimFlags {
    const QCommandLineOption config{QStringLiteral("config"), QStringLiteral("Agent config file (JSON)."),
                                    QStringLiteral("FILE")};
    const QCommandLineOption listen{QStringLiteral("listen"), QStringLiteral("HOST:PORT to listen on."),
                                    QStringLiteral("HOST:PORT")};
    const QCommandLineOption merchantKey{
        QStringLiteral("merchant-public-key"),
        QStringLiteral("Merchant public key PEM (WeChat; Alipay too unless --alipay-app-public-key)."),
        QStringLiteral("PEM")};
    const QCommandLineOption alipayKey{QStringLiteral("alipay-app-public-key"),
                                       QStringLiteral("Alipay app public key PEM."), QStringLiteral("PEM")};
    const QCommandLineOption mchid{QStringLiteral("mchid"), QStringLiteral("WeChat mchid to insist on."),
                                   QStringLiteral("ID")};
    const QCommandLineOption appid{QStringLiteral("appid"), QStringLiteral("WeChat appid to insist on."),
                                   QStringLiteral("ID")};
    const QCommandLineOption alipayAppId{QStringLiteral("alipay-app-id"), QStringLiteral("Alipay app_id to insist on."),
                                         QStringLiteral("ID")};
    const QCommandLineOption alipaySellerId{QStringLiteral("alipay-seller-id"), QStringLiteral("Alipay seller_id."),
                                            QStringLiteral("ID")};
    const QCommandLineOption serial{QStringLiteral("platform-serial"),
                                    QStringLiteral("Platform key serial (default PAYONCE_SIM_0001)."),
                                    QStringLiteral("SERIAL")};
    const QCommandLineOption keyOut{QStringLiteral("platform-key-out"),
                                    QStringLiteral("Write the platform public key PEM here once listening."),
                                    QStringLiteral("PATH")};
    const QCommandLineOption exitWithParent{QStringLiteral("exit-with-parent"),
                                            QStringLiteral("Terminate when the parent process dies.")};
    const QCommandLineOption apiv3Key{
        QStringLiteral("apiv3-key"),
        QStringLiteral("WeChat APIv3 key (32 ASCII characters) for notification resources; prefer the environment "
                       "variable PAYONCE_WECHAT_APIV3_KEY."),
        QStringLiteral("KEY")};
    const QCommandLineOption timeScale{
        QStringLiteral("time-scale"),
        QStringLiteral("Multiplier of the platforms' notification retry intervals (default 1.0)."),
        QStringLiteral("X")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.addOptions({config, listen, merchantKey, alipayKey, mchid, appid, alipayAppId, alipaySellerId, serial,
                           keyOut, exitWithParent, apiv3Key, timeScale});
    }
};

/// Where the keys come from, gathered from the config file, the flags and the environment
/// (later ones win), read once at the end.
struct KeySources {
    QString wechatPublic, wechatPrivate, alipayPublic, alipayPrivate;
    QByteArray apiv3;
    QString apiv3Source;
};

/// --config: the agent's config file, read for the ids and keys the simulator insists on.
core::Result<void> readAgentConfig(const QString &path, SimOptions &options, KeySources &keys)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return misconfigured(QStringLiteral("--config %1: %2").arg(path, file.errorString()));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (!doc.isObject())
        return misconfigured(QStringLiteral("--config %1: not a JSON object (%2)").arg(path, error.errorString()));
    const QString base = QFileInfo(path).absolutePath();
    const QJsonObject root = doc.object();
    const QJsonObject wechat = root.value(u"wechat").toObject();
    const QJsonObject alipay = root.value(u"alipay").toObject();
    options.mchid = wechat.value(u"mchid").toString();
    options.appid = wechat.value(u"appid").toString();
    options.merchantSerial = wechat.value(u"merchant_serial").toString();
    if (wechat.contains(u"apiv3_key")) {
        keys.apiv3 = wechat.value(u"apiv3_key").toString().toUtf8();
        keys.apiv3Source = QStringLiteral("--config %1, wechat.apiv3_key").arg(path);
    }
    if (wechat.contains(u"merchant_public_key"))
        keys.wechatPublic = resolve(base, wechat.value(u"merchant_public_key").toString());
    else if (wechat.contains(u"merchant_private_key"))
        keys.wechatPrivate = resolve(base, wechat.value(u"merchant_private_key").toString());
    options.alipayAppId = alipay.value(u"app_id").toString();
    options.alipaySellerId = alipay.value(u"seller_id").toString();
    if (alipay.contains(u"app_public_key"))
        keys.alipayPublic = resolve(base, alipay.value(u"app_public_key").toString());
    else if (alipay.contains(u"private_key"))
        keys.alipayPrivate = resolve(base, alipay.value(u"private_key").toString());
    const QString simListen = root.value(u"sim").toObject().value(u"listen").toString();
    if (!simListen.isEmpty()) {
        if (auto parsed = parseListen(simListen, &options, QStringLiteral("config sim.listen")); !parsed)
            return parsed.error();
    }
    return {};
}

/// The flags and the environment, over what the config file said.
core::Result<void> applyFlags(const QCommandLineParser &parser, const SimFlags &f,
                              const QProcessEnvironment &environment, SimOptions &options, KeySources &keys)
{
    if (parser.isSet(f.listen)) {
        if (auto parsed = parseListen(parser.value(f.listen), &options, QStringLiteral("--listen")); !parsed)
            return parsed.error();
    }
    if (parser.isSet(f.merchantKey)) {
        keys.wechatPublic = parser.value(f.merchantKey);
        keys.wechatPrivate.clear();
        if (!parser.isSet(f.alipayKey) && keys.alipayPublic.isEmpty() && keys.alipayPrivate.isEmpty())
            keys.alipayPublic = keys.wechatPublic;
    }
    if (parser.isSet(f.alipayKey)) {
        keys.alipayPublic = parser.value(f.alipayKey);
        keys.alipayPrivate.clear();
    }
    if (parser.isSet(f.mchid))
        options.mchid = parser.value(f.mchid);
    if (parser.isSet(f.appid))
        options.appid = parser.value(f.appid);
    if (parser.isSet(f.alipayAppId))
        options.alipayAppId = parser.value(f.alipayAppId);
    if (parser.isSet(f.alipaySellerId))
        options.alipaySellerId = parser.value(f.alipaySellerId);
    if (parser.isSet(f.serial))
        options.platformSerial = parser.value(f.serial);
    if (parser.isSet(f.keyOut))
        options.platformKeyOut = parser.value(f.keyOut);
    options.exitWithParent = parser.isSet(f.exitWithParent);
    if (environment.contains(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY"))) {
        keys.apiv3 = environment.value(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY")).toUtf8();
        keys.apiv3Source = QStringLiteral("PAYONCE_WECHAT_APIV3_KEY");
    }
    if (parser.isSet(f.apiv3Key)) {
        keys.apiv3 = parser.value(f.apiv3Key).toUtf8();
        keys.apiv3Source = QStringLiteral("--apiv3-key");
    }
    if (!keys.apiv3Source.isEmpty()) {
        if (const QString problem = apiv3KeyProblem(keys.apiv3); !problem.isEmpty())
            return misconfigured(keys.apiv3Source + QStringLiteral(": ") + problem);
        options.apiv3Key = keys.apiv3;
    }
    if (parser.isSet(f.timeScale)) {
        bool ok = false;
        const double scale = parser.value(f.timeScale).toDouble(&ok);
        if (!ok || !(scale > 0.0) || scale > 1000.0)
            return misconfigured(QStringLiteral("--time-scale: expected a number in (0, 1000], got \"%1\"")
                                     .arg(parser.value(f.timeScale)));
        options.timeScale = scale;
    }
    return {};
}

/// The merchant's and the Alipay app's public keys, from a public PEM or a private one's half.
core::Result<void> loadKeys(const KeySources &keys, SimOptions &options)
{
    if (keys.wechatPublic.isEmpty() && keys.wechatPrivate.isEmpty())
        return misconfigured(QStringLiteral(
            "no merchant public key: give --merchant-public-key or wechat.merchant_public_key in --config"));
    auto wechatKey = publicKeyFrom(keys.wechatPublic, keys.wechatPrivate, QStringLiteral("WeChat merchant key"));
    if (!wechatKey)
        return wechatKey.error();
    options.wechatMerchantKey = *wechatKey;
    if (keys.alipayPublic.isEmpty() && keys.alipayPrivate.isEmpty()) {
        options.alipayAppKey = options.wechatMerchantKey;
    } else {
        auto key = publicKeyFrom(keys.alipayPublic, keys.alipayPrivate, QStringLiteral("Alipay app key"));
        if (!key)
            return key.error();
        options.alipayAppKey = *key;
    }
    return {};
}

} // namespace

QString apiv3KeyProblem(QByteArrayView key)
{
    if (key.size() != 32)
        return QStringLiteral("must be 32 printable ASCII characters (got %1 bytes)").arg(key.size());
    for (char c : key) {
        if (c < 0x21 || c > 0x7e)
            return QStringLiteral("must be 32 printable ASCII characters");
    }
    return {};
}

core::Result<SimOptions> parseSimOptions(const QStringList &arguments, const QProcessEnvironment &environment)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("payonce-sim: simulated WeChat Pay v3 and Alipay platforms"));
    parser.addHelpOption();
    const SimFlags flags;
    flags.addTo(parser);
    if (!parser.parse(arguments))
        return misconfigured(parser.errorText());
    if (!parser.positionalArguments().isEmpty())
        return misconfigured(
            QStringLiteral("unexpected argument \"%1\"").arg(parser.positionalArguments().constFirst()));

    SimOptions options;
    if (parser.isSet(QStringLiteral("help"))) {
        options.showHelp = true;
        options.helpText = parser.helpText();
        return options;
    }
    KeySources keys;
    if (parser.isSet(flags.config)) {
        if (auto read = readAgentConfig(parser.value(flags.config), options, keys); !read)
            return read.error();
    }
    if (auto applied = applyFlags(parser, flags, environment, options, keys); !applied)
        return applied.error();
    if (auto loaded = loadKeys(keys, options); !loaded)
        return loaded.error();
    return options;
}

} // namespace payonce::sim
