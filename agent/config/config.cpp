#include "config.h"

#include "configbuilder_p.h"
#include "configoptions.h"
#include "configsetting_p.h"
#include "tokenname.h"
#include "urlparts_p.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <QSysInfo>
#include <QUrl>

#include <algorithm>
#include <limits>
#include <optional>

namespace payonce::config {

namespace {

using core::Error;
using core::ErrorCode;
using core::Result;

// JSON has no comments: a key that starts with "//" is one, in any object, and is
// skipped without a warning (resources/payonce.example.json is annotated this way).
bool isComment(const QString &key)
{
    return key.startsWith(u"//");
}

QString jsonTypeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("undefined");
}

std::optional<bool> textBoolean(const QString &text)
{
    const QString t = text.toLower();
    if (t == u"1" || t == u"true" || t == u"yes" || t == u"on")
        return true;
    if (t == u"0" || t == u"false" || t == u"no" || t == u"off")
        return false;
    return std::nullopt;
}

QString resolved(const QString &path, const QString &baseDir)
{
    if (path.isEmpty() || baseDir.isEmpty() || QDir::isAbsolutePath(path))
        return path;
    return QDir::cleanPath(QDir(baseDir).absoluteFilePath(path));
}

// The fields of an array element (auth.tokens[i], wechat.platform_keys[i]).
struct FieldSpec {
    QStringView name;
    bool isPath;
};

constexpr FieldSpec kTokenFields[] = {{u"name", false}, {u"role", false}, {u"sha256", false}};
constexpr FieldSpec kPlatformKeyFields[] = {{u"serial", false}, {u"public_key", true}};

class Layers {
public:
    QHash<QString, Setting> settings;
    QStringList warnings;

    // A value from the config file: JSON types are checked here; relative paths are
    // resolved against the file's folder.
    Result<void> takeFromFile(const OptionSpec &spec, const QJsonValue &value, const QString &filePath)
    {
        const QString origin = QStringLiteral("config file %1, key \"%2\"").arg(filePath, spec.key);
        const QString baseDir = QFileInfo(filePath).absolutePath();
        auto typeError = [&](const QString &expected) {
            return misconfigured(origin + QStringLiteral(": must be ") + expected + QStringLiteral(", not ")
                                 + jsonTypeName(value));
        };
        switch (spec.kind) {
        case OptionKind::ConfigFile:
            warnings << origin + QStringLiteral(": ignored (a config file cannot name another)");
            return {};
        case OptionKind::String:
        case OptionKind::Secret:
            if (!value.isString())
                return typeError(QStringLiteral("a string"));
            break;
        case OptionKind::Path:
            if (!value.isString())
                return typeError(QStringLiteral("a string"));
            settings.insert(spec.key.toString(), {resolved(value.toString(), baseDir), origin});
            return {};
        case OptionKind::Database: {
            if (!value.isString())
                return typeError(QStringLiteral("a string"));
            QString text = value.toString();
            if (text.startsWith(u"sqlite:") && text.mid(7) != u":memory:")
                text = QStringLiteral("sqlite:") + resolved(text.mid(7), baseDir);
            settings.insert(spec.key.toString(), {text, origin});
            return {};
        }
        case OptionKind::Integer:
            if (!jsonInteger(value))
                return typeError(QStringLiteral("an integer"));
            break;
        case OptionKind::Boolean:
            if (!value.isBool())
                return typeError(QStringLiteral("true or false"));
            break;
        case OptionKind::AuthTokens:
        case OptionKind::PlatformKeys: return takeArray(spec, value, origin, baseDir);
        case OptionKind::UrlList:
        case OptionKind::SubnetList:
        case OptionKind::HostPortList: return takeStringList(spec, value, origin);
        }
        settings.insert(spec.key.toString(), {value, origin});
        return {};
    }

    // A value from the environment or a flag: text converted to the JSON a file would hold.
    Result<void> takeFromText(const OptionSpec &spec, const QString &text, const QString &origin)
    {
        switch (spec.kind) {
        case OptionKind::ConfigFile: return {};
        case OptionKind::String:
        case OptionKind::Secret:
        case OptionKind::Path:
        case OptionKind::Database: settings.insert(spec.key.toString(), {text, origin}); return {};
        case OptionKind::Integer: {
            const auto n = detail::parseDigits(text, 18);
            if (!n)
                return misconfigured(origin + QStringLiteral(": \"%1\" is not a whole number").arg(text));
            settings.insert(spec.key.toString(), {QJsonValue(*n), origin});
            return {};
        }
        case OptionKind::Boolean: {
            const auto b = textBoolean(text);
            if (!b)
                return misconfigured(
                    origin + QStringLiteral(": \"%1\" is not a boolean (true/false, 1/0, yes/no, on/off)").arg(text));
            settings.insert(spec.key.toString(), {*b, origin});
            return {};
        }
        case OptionKind::AuthTokens:
        case OptionKind::PlatformKeys:
        case OptionKind::UrlList:
        case OptionKind::SubnetList:
        case OptionKind::HostPortList: {
            // The text may hold secrets: the error never quotes it.
            QJsonParseError parseError;
            const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &parseError);
            if (parseError.error != QJsonParseError::NoError || !doc.isArray())
                return misconfigured(origin
                                     + QStringLiteral(": must be a JSON array (%1)")
                                           .arg(parseError.error != QJsonParseError::NoError
                                                    ? parseError.errorString()
                                                    : QStringLiteral("got another JSON value")));
            if (spec.kind == OptionKind::UrlList || spec.kind == OptionKind::SubnetList
                || spec.kind == OptionKind::HostPortList)
                return takeStringList(spec, doc.array(), origin);
            return takeArray(spec, doc.array(), origin, QString());
        }
        }
        Q_UNREACHABLE();
    }

private:
    Result<void> takeStringList(const OptionSpec &spec, const QJsonValue &value, const QString &origin)
    {
        if (!value.isArray())
            return misconfigured(origin + QStringLiteral(": must be an array of strings, not ") + jsonTypeName(value));
        const QJsonArray in = value.toArray();
        for (qsizetype i = 0; i < in.size(); ++i) {
            if (!in.at(i).isString())
                return misconfigured(origin
                                     + QStringLiteral(": %1[%2] must be a string, not %3")
                                           .arg(spec.key)
                                           .arg(i)
                                           .arg(jsonTypeName(in.at(i))));
        }
        settings.insert(spec.key.toString(), {in, origin});
        return {};
    }

    Result<void> takeArray(const OptionSpec &spec, const QJsonValue &value, const QString &origin,
                           const QString &baseDir)
    {
        if (!value.isArray())
            return misconfigured(origin + QStringLiteral(": must be an array, not ") + jsonTypeName(value));
        const std::span<const FieldSpec> fields = spec.kind == OptionKind::AuthTokens
                                                      ? std::span<const FieldSpec>(kTokenFields)
                                                      : std::span<const FieldSpec>(kPlatformKeyFields);
        QJsonArray out;
        const QJsonArray in = value.toArray();
        for (qsizetype i = 0; i < in.size(); ++i) {
            const QString where = QStringLiteral("%1[%2]").arg(spec.key).arg(i);
            if (!in.at(i).isObject())
                return misconfigured(
                    origin + QStringLiteral(": %1 must be an object, not %2").arg(where, jsonTypeName(in.at(i))));
            const QJsonObject element = in.at(i).toObject();
            QJsonObject normalized;
            for (const FieldSpec &field : fields) {
                const QJsonValue v = element.value(field.name);
                if (v.isUndefined())
                    return misconfigured(origin + QStringLiteral(": %1.%2 is missing").arg(where, field.name));
                if (!v.isString())
                    return misconfigured(
                        origin
                        + QStringLiteral(": %1.%2 must be a string, not %3").arg(where, field.name, jsonTypeName(v)));
                normalized.insert(field.name, field.isPath ? resolved(v.toString(), baseDir) : v.toString());
            }
            for (auto it = element.begin(); it != element.end(); ++it) {
                if (isComment(it.key()))
                    continue;
                const bool known = std::any_of(fields.begin(), fields.end(),
                                               [&](const FieldSpec &f) { return f.name == it.key(); });
                if (!known)
                    warnings << origin + QStringLiteral(": unknown key \"%1.%2\" ignored").arg(where, it.key());
            }
            out.append(normalized);
        }
        settings.insert(spec.key.toString(), {out, origin});
        return {};
    }
};

Result<void> readConfigFile(const QString &path, Layers &layers)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return misconfigured(QStringLiteral("config file %1: cannot read it: %2").arg(path, file.errorString()));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return misconfigured(QStringLiteral("config file %1: invalid JSON at offset %2: %3")
                                 .arg(path)
                                 .arg(parseError.offset)
                                 .arg(parseError.errorString()));
    if (!doc.isObject())
        return misconfigured(QStringLiteral("config file %1: the top level must be a JSON object").arg(path));

    // Sections ("wechat", ...) are the prefixes of dotted keys in the table.
    QSet<QString> sections;
    for (const OptionSpec &spec : optionTable()) {
        const qsizetype dot = spec.key.indexOf(u'.');
        if (dot > 0)
            sections.insert(spec.key.left(dot).toString());
    }

    const QJsonObject root = doc.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (isComment(it.key()))
            continue;
        if (sections.contains(it.key())) {
            if (!it.value().isObject())
                return misconfigured(QStringLiteral("config file %1, key \"%2\": must be an object, not %3")
                                         .arg(path, it.key(), jsonTypeName(it.value())));
            const QJsonObject section = it.value().toObject();
            for (auto sub = section.begin(); sub != section.end(); ++sub) {
                if (isComment(sub.key()))
                    continue;
                const QString key = it.key() + u'.' + sub.key();
                const OptionSpec *spec = findOption(key);
                if (!spec) {
                    layers.warnings << QStringLiteral("config file %1: unknown key \"%2\" ignored").arg(path, key);
                    continue;
                }
                if (auto r = layers.takeFromFile(*spec, sub.value(), path); !r)
                    return r;
            }
            continue;
        }
        const OptionSpec *spec = findOption(it.key());
        if (!spec || spec->key.contains(u'.')) {
            layers.warnings << QStringLiteral("config file %1: unknown key \"%2\" ignored").arg(path, it.key());
            continue;
        }
        if (auto r = layers.takeFromFile(*spec, it.value(), path); !r)
            return r;
    }
    return {};
}

} // namespace

QString callbackCommitName(CallbackCommit commit)
{
    return commit == CallbackCommit::One ? QStringLiteral("one") : QStringLiteral("accepted_first");
}

QString logFormatName(LogFormat format)
{
    return format == LogFormat::Json ? QStringLiteral("json") : QStringLiteral("text");
}

QString logLevelName(LogLevel level)
{
    switch (level) {
    case LogLevel::Debug: return QStringLiteral("debug");
    case LogLevel::Info: return QStringLiteral("info");
    case LogLevel::Warning: return QStringLiteral("warning");
    }
    Q_UNREACHABLE();
}

Result<LoadResult> loadConfig(const QStringList &arguments, const QProcessEnvironment &environment)
{
    LoadResult result;
    const QString program = arguments.isEmpty() ? QStringLiteral("payonce-agent")
                                                : QFileInfo(arguments.constFirst()).fileName();

    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QString());
    const QCommandLineOption version({QStringLiteral("v"), QStringLiteral("version")}, QString());
    const QCommandLineOption listRoutes(QStringLiteral("list-routes"), QString());
    parser.addOption(help);
    parser.addOption(version);
    parser.addOption(listRoutes);
    for (const OptionSpec &spec : optionTable()) {
        if (!spec.flag.isEmpty())
            parser.addOption(
                QCommandLineOption(spec.flag.toString(), spec.description.toString(), spec.valueName.toString()));
    }
    if (!parser.parse(arguments.isEmpty() ? QStringList{program} : arguments))
        return misconfigured(parser.errorText() + QStringLiteral(" (see --help)"));
    if (!parser.positionalArguments().isEmpty())
        return misconfigured(
            QStringLiteral("unexpected argument \"%1\" (see --help)").arg(parser.positionalArguments().constFirst()));
    if (parser.isSet(help)) {
        result.action = LoadResult::Action::ShowHelp;
        result.text = helpText(program);
        return result;
    }
    if (parser.isSet(version)) {
        result.action = LoadResult::Action::ShowVersion;
        result.text = versionText(program);
        return result;
    }

    Layers layers;
    const OptionSpec *configSpec = findOption(u"config");
    QString configPath = environment.value(envName(*configSpec));
    if (parser.isSet(QStringLiteral("config")))
        configPath = parser.values(QStringLiteral("config")).constLast();
    if (parser.isSet(QStringLiteral("config")) && configPath.isEmpty())
        return misconfigured(QStringLiteral("--config: the file name is empty"));
    if (!configPath.isEmpty()) {
        configPath = QDir::cleanPath(QFileInfo(configPath).absoluteFilePath());
        if (auto r = readConfigFile(configPath, layers); !r)
            return r.error();
        result.config.configFile = configPath;
    }

    for (const OptionSpec &spec : optionTable()) {
        const QString name = envName(spec);
        const QString text = environment.value(name);
        if (text.isEmpty() || spec.kind == OptionKind::ConfigFile)
            continue;
        if (auto r = layers.takeFromText(spec, text, name); !r)
            return r.error();
    }
    for (const OptionSpec &spec : optionTable()) {
        if (spec.flag.isEmpty() || spec.kind == OptionKind::ConfigFile || !parser.isSet(spec.flag.toString()))
            continue;
        const QString text = parser.values(spec.flag.toString()).constLast();
        if (auto r = layers.takeFromText(spec, text, QStringLiteral("--") + spec.flag); !r)
            return r.error();
    }

    auto config = ConfigBuilder(layers.settings).build();
    if (!config)
        return config.error();
    const QString configFile = result.config.configFile;
    result.config = std::move(config).value();
    result.config.configFile = configFile;
    result.warnings = layers.warnings;
    if (parser.isSet(listRoutes))
        result.action = LoadResult::Action::ListRoutes;
    return result;
}

} // namespace payonce::config
