#include "logging.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMutex>
#include <QMutexLocker>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace payonce::logging {

namespace {

/// A scope's fields: an object, or one name and text value.
struct Scope {
    QJsonObject fields;
    QLatin1StringView name;
    QString value;
};
thread_local std::vector<Scope> t_scopedFields;

struct State {
    QMutex mutex;
    Options options;
    bool installed = false;
    QtMessageHandler previous = nullptr;
};

State &state()
{
    static State s;
    return s;
}

bool isReservedKey(const QString &key)
{
    return key == u"ts" || key == u"level" || key == u"category" || key == u"msg";
}

// JSON string escaping by hand so the line keeps the order ts, level, category, msg.
void appendJsonString(QString &out, QStringView text)
{
    out += u'"';
    for (QChar c : text) {
        switch (c.unicode()) {
        case u'"': out += QStringLiteral("\\\""); break;
        case u'\\': out += QStringLiteral("\\\\"); break;
        case u'\n': out += QStringLiteral("\\n"); break;
        case u'\r': out += QStringLiteral("\\r"); break;
        case u'\t': out += QStringLiteral("\\t"); break;
        default:
            if (c.unicode() < 0x20 || c.unicode() == 0x7f)
                out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QChar(u'0'));
            else
                out += c;
        }
    }
    out += u'"';
}

QString jsonScalar(const QJsonValue &value)
{
    if (value.isString()) {
        QString s;
        appendJsonString(s, value.toString());
        return s;
    }
    // Numbers, booleans, null, arrays and objects: let Qt write them, without the wrapper.
    const QByteArray wrapped = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(wrapped.mid(1, wrapped.size() - 2));
}

// Text form: control characters are escaped so one message is always one line.
QString oneLine(QStringView text)
{
    QString out;
    out.reserve(text.size());
    for (QChar c : text) {
        if (c == u'\n')
            out += QStringLiteral("\\n");
        else if (c == u'\r')
            out += QStringLiteral("\\r");
        else if (c.unicode() < 0x20 && c != u'\t')
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QChar(u'0'));
        else
            out += c;
    }
    return out;
}

QString textFieldValue(const QJsonValue &value)
{
    if (value.isString()) {
        const QString s = value.toString();
        const bool plain = !s.isEmpty() && std::none_of(s.begin(), s.end(), [](QChar c) {
            return c.isSpace() || c == u'"' || c == u'=' || c.unicode() < 0x20;
        });
        return plain ? s : jsonScalar(value);
    }
    return jsonScalar(value);
}

void writeToStderr(const QByteArray &line)
{
    std::fwrite(line.constData(), 1, size_t(line.size()), stderr);
    std::fflush(stderr);
}

void messageHandler(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    State &s = state();
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString category = context.category ? QString::fromUtf8(context.category) : QStringLiteral("default");
    QMutexLocker lock(&s.mutex);
    const QByteArray line = formatLine(s.options.format, type, category, message, now, s.options.fields);
    if (s.options.sink)
        s.options.sink(line);
    else
        writeToStderr(line);
}

} // namespace

QString levelName(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg: return QStringLiteral("debug");
    case QtInfoMsg: return QStringLiteral("info");
    case QtWarningMsg: return QStringLiteral("warning");
    case QtCriticalMsg: return QStringLiteral("critical");
    case QtFatalMsg: return QStringLiteral("fatal");
    }
    return QStringLiteral("unknown");
}

QByteArray formatLine(Format format, QtMsgType type, QStringView category, const QString &message,
                      const QDateTime &timestampUtc, const QJsonObject &fields)
{
    // Later scopes win over earlier ones, and every scope over the process-wide fields.
    QJsonObject all = fields;
    for (const Scope &scope : t_scopedFields) {
        for (auto it = scope.fields.begin(); it != scope.fields.end(); ++it)
            all.insert(it.key(), it.value());
        if (!scope.name.isEmpty())
            all.insert(scope.name, scope.value);
    }

    const QString ts = timestampUtc.toUTC().toString(Qt::ISODateWithMs);
    QString out;
    if (format == Format::Json) {
        out = QStringLiteral("{\"ts\":");
        appendJsonString(out, ts);
        out += QStringLiteral(",\"level\":");
        appendJsonString(out, levelName(type));
        out += QStringLiteral(",\"category\":");
        appendJsonString(out, category);
        out += QStringLiteral(",\"msg\":");
        appendJsonString(out, message);
        for (auto it = all.begin(); it != all.end(); ++it) {
            if (isReservedKey(it.key()))
                continue;
            out += u',';
            appendJsonString(out, it.key());
            out += u':' + jsonScalar(it.value());
        }
        out += u'}';
    } else {
        out = ts + u' ' + levelName(type) + u' ' + category + QStringLiteral(": ") + oneLine(message);
        for (auto it = all.begin(); it != all.end(); ++it) {
            if (!isReservedKey(it.key()))
                out += u' ' + oneLine(it.key()) + u'=' + oneLine(textFieldValue(it.value()));
        }
    }
    out += u'\n';
    return out.toUtf8();
}

QString filterRules(Level level)
{
    switch (level) {
    case Level::Debug: return QStringLiteral("*.debug=false\npayonce.*.debug=true\ndefault.debug=true");
    case Level::Info: return QStringLiteral("*.debug=false");
    case Level::Warning: return QStringLiteral("*.debug=false\n*.info=false");
    }
    Q_UNREACHABLE();
}

std::optional<Format> formatFromName(QStringView name)
{
    if (name == u"text")
        return Format::Text;
    if (name == u"json")
        return Format::Json;
    return std::nullopt;
}

std::optional<Level> levelFromName(QStringView name)
{
    if (name == u"debug")
        return Level::Debug;
    if (name == u"info")
        return Level::Info;
    if (name == u"warning")
        return Level::Warning;
    return std::nullopt;
}

void install(Options options)
{
    State &s = state();
    const QString rules = filterRules(options.level);
    {
        QMutexLocker lock(&s.mutex);
        s.options = std::move(options);
        if (!s.installed) {
            s.previous = qInstallMessageHandler(messageHandler);
            s.installed = true;
        }
    }
    // Outside the lock: setFilterRules may itself log (a malformed rule) through us.
    QLoggingCategory::setFilterRules(rules);
}

void uninstall()
{
    State &s = state();
    {
        QMutexLocker lock(&s.mutex);
        if (!s.installed)
            return;
        qInstallMessageHandler(s.previous);
        s.previous = nullptr;
        s.installed = false;
        s.options = Options{};
    }
    QLoggingCategory::setFilterRules(QString());
}

ScopedFields::ScopedFields(QJsonObject fields)
{
    t_scopedFields.push_back(Scope{std::move(fields), {}, {}});
}

ScopedFields::ScopedFields(QLatin1StringView name, QString value)
{
    t_scopedFields.push_back(Scope{{}, name, std::move(value)});
}

ScopedFields::~ScopedFields()
{
    t_scopedFields.pop_back();
}

} // namespace payonce::logging
