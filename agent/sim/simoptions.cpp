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
    const QCommandLineOption config(QStringLiteral("config"), QStringLiteral("Agent config file (JSON)."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption listen(QStringLiteral("listen"), QStringLiteral("HOST:PORT to listen on."),
                                    QStringLiteral("HOST:PORT"));
    const QCommandLineOption merchantKey(
        QStringLiteral("merchant-public-key"),
        QStringLiteral("Merchant public key PEM (WeChat; Alipay too unless --alipay-app-public-key)."),
        QStringLiteral("PEM"));
    const QCommandLineOption alipayKey(QStringLiteral("alipay-app-public-key"),
                                       QStringLiteral("Alipay app public key PEM."), QStringLiteral("PEM"));
    const QCommandLineOption mchid(QStringLiteral("mchid"), QStringLiteral("WeChat mchid to insist on."),
                                   QStringLiteral("ID"));
    const QCommandLineOption appid(QStringLiteral("appid"), QStringLiteral("WeChat appid to insist on."),
                                   QStringLiteral("ID"));
    const QCommandLineOption alipayAppId(QStringLiteral("alipay-app-id"), QStringLiteral("Alipay app_id to insist on."),
                                         QStringLiteral("ID"));
    const QCommandLineOption alipaySellerId(QStringLiteral("alipay-seller-id"), QStringLiteral("Alipay seller_id."),
                                            QStringLiteral("ID"));
    const QCommandLineOption serial(QStringLiteral("platform-serial"),
                                    QStringLiteral("Platform key serial (default PAYONCE_SIM_0001)."),
                                    QStringLiteral("SERIAL"));
    const QCommandLineOption keyOut(QStringLiteral("platform-key-out"),
                                    QStringLiteral("Write the platform public key PEM here once listening."),
                                    QStringLiteral("PATH"));
    const QCommandLineOption exitWithParent(QStringLiteral("exit-with-parent"),
                                            QStringLiteral("Terminate when the parent process dies."));
    const QCommandLineOption apiv3Key(
        QStringLiteral("apiv3-key"),
        QStringLiteral("WeChat APIv3 key (32 ASCII characters) for notification resources; prefer the environment "
                       "variable PAYONCE_WECHAT_APIV3_KEY."),
        QStringLiteral("KEY"));
    const QCommandLineOption timeScale(
        QStringLiteral("time-scale"),
        QStringLiteral("Multiplier of the platforms' notification retry intervals (default 1.0)."),
        QStringLiteral("X"));
    parser.addOptions({config, listen, merchantKey, alipayKey, mchid, appid, alipayAppId, alipaySellerId, serial,
                       keyOut, exitWithParent, apiv3Key, timeScale});
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

    QString wechatPublic, wechatPrivate, alipayPublic, alipayPrivate;
    QByteArray apiv3;
    QString apiv3Source;
    if (parser.isSet(config)) {
        const QString path = parser.value(config);
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
            apiv3 = wechat.value(u"apiv3_key").toString().toUtf8();
            apiv3Source = QStringLiteral("--config %1, wechat.apiv3_key").arg(path);
        }
        if (wechat.contains(u"merchant_public_key"))
            wechatPublic = resolve(base, wechat.value(u"merchant_public_key").toString());
        else if (wechat.contains(u"merchant_private_key"))
            wechatPrivate = resolve(base, wechat.value(u"merchant_private_key").toString());
        options.alipayAppId = alipay.value(u"app_id").toString();
        options.alipaySellerId = alipay.value(u"seller_id").toString();
        if (alipay.contains(u"app_public_key"))
            alipayPublic = resolve(base, alipay.value(u"app_public_key").toString());
        else if (alipay.contains(u"private_key"))
            alipayPrivate = resolve(base, alipay.value(u"private_key").toString());
        const QString simListen = root.value(u"sim").toObject().value(u"listen").toString();
        if (!simListen.isEmpty()) {
            if (auto parsed = parseListen(simListen, &options, QStringLiteral("config sim.listen")); !parsed)
                return parsed.error();
        }
    }
    if (parser.isSet(listen)) {
        if (auto parsed = parseListen(parser.value(listen), &options, QStringLiteral("--listen")); !parsed)
            return parsed.error();
    }
    if (parser.isSet(merchantKey)) {
        wechatPublic = parser.value(merchantKey);
        wechatPrivate.clear();
        if (!parser.isSet(alipayKey) && alipayPublic.isEmpty() && alipayPrivate.isEmpty())
            alipayPublic = wechatPublic;
    }
    if (parser.isSet(alipayKey)) {
        alipayPublic = parser.value(alipayKey);
        alipayPrivate.clear();
    }
    if (parser.isSet(mchid))
        options.mchid = parser.value(mchid);
    if (parser.isSet(appid))
        options.appid = parser.value(appid);
    if (parser.isSet(alipayAppId))
        options.alipayAppId = parser.value(alipayAppId);
    if (parser.isSet(alipaySellerId))
        options.alipaySellerId = parser.value(alipaySellerId);
    if (parser.isSet(serial))
        options.platformSerial = parser.value(serial);
    if (parser.isSet(keyOut))
        options.platformKeyOut = parser.value(keyOut);
    options.exitWithParent = parser.isSet(exitWithParent);
    if (environment.contains(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY"))) {
        apiv3 = environment.value(QStringLiteral("PAYONCE_WECHAT_APIV3_KEY")).toUtf8();
        apiv3Source = QStringLiteral("PAYONCE_WECHAT_APIV3_KEY");
    }
    if (parser.isSet(apiv3Key)) {
        apiv3 = parser.value(apiv3Key).toUtf8();
        apiv3Source = QStringLiteral("--apiv3-key");
    }
    if (!apiv3Source.isEmpty()) {
        if (const QString problem = apiv3KeyProblem(apiv3); !problem.isEmpty())
            return misconfigured(apiv3Source + QStringLiteral(": ") + problem);
        options.apiv3Key = apiv3;
    }
    if (parser.isSet(timeScale)) {
        bool ok = false;
        const double scale = parser.value(timeScale).toDouble(&ok);
        if (!ok || !(scale > 0.0) || scale > 1000.0)
            return misconfigured(QStringLiteral("--time-scale: expected a number in (0, 1000], got \"%1\"")
                                     .arg(parser.value(timeScale)));
        options.timeScale = scale;
    }

    if (wechatPublic.isEmpty() && wechatPrivate.isEmpty())
        return misconfigured(QStringLiteral(
            "no merchant public key: give --merchant-public-key or wechat.merchant_public_key in --config"));
    auto wechatKey = publicKeyFrom(wechatPublic, wechatPrivate, QStringLiteral("WeChat merchant key"));
    if (!wechatKey)
        return wechatKey.error();
    options.wechatMerchantKey = *wechatKey;
    if (alipayPublic.isEmpty() && alipayPrivate.isEmpty()) {
        options.alipayAppKey = options.wechatMerchantKey;
    } else {
        auto key = publicKeyFrom(alipayPublic, alipayPrivate, QStringLiteral("Alipay app key"));
        if (!key)
            return key.error();
        options.alipayAppKey = *key;
    }
    return options;
}

} // namespace payonce::sim
