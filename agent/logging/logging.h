#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringView>
#include <QtGlobal>

#include <functional>
#include <optional>

namespace payonce::logging {

enum class Format {
    Text, ///< "2026-11-29T10:00:00.123Z info payonce.agent.sql: message key=value"
    Json, ///< {"ts":"...","level":"info","category":"payonce.agent.sql","msg":"message","key":"value"}
};

enum class Level {
    Debug,
    Info,
    Warning
};

/// Receives each finished line, '\n' included. Called with the logger's lock held, so
/// lines never interleave; it must not log itself.
using Sink = std::function<void(const QByteArray &line)>;

struct Options {
    Format format = Format::Text;
    Level level = Level::Info;
    QJsonObject fields; ///< added to every line, e.g. {"instance": "host-1234"}
    Sink sink;          ///< empty: stderr, flushed after every line
};

/// Installs the process-wide Qt message handler and the category filter rules for
/// options.level. Every qDebug/qCInfo/qCWarning/... from any thread then goes through
/// formatLine() to the sink, one line per message (newlines in a message are escaped).
/// Calling it again replaces the options. QT_LOGGING_RULES, if set, still overrides the
/// level for the categories it names (Qt evaluates it after our rules).
/// Thread-safe; call it early in main(), after the configuration is known.
void install(Options options);

/// Restores the handler that was active before the first install() and Qt's default rules.
void uninstall();

/// One log line, '\n' included. Pure: no global state except the thread's ScopedFields.
/// Keys of fields that clash with ts/level/category/msg are dropped.
QByteArray formatLine(Format format, QtMsgType type, QStringView category, const QString &message,
                      const QDateTime &timestampUtc, const QJsonObject &fields = {});

/// The QLoggingCategory filter rules for a level: payonce's and the default category's
/// debug output is on only at Debug; Qt's own debug output stays off.
QString filterRules(Level level);

/// "text"/"json" and "debug"/"info"/"warning"; nullopt for anything else.
std::optional<Format> formatFromName(QStringView name);
std::optional<Level> levelFromName(QStringView name);

/// "debug", "info", "warning", "critical", "fatal".
QString levelName(QtMsgType type);

/// Adds fields (request_id, order_no, ...) to every line this thread logs while the
/// object lives. Scopes nest; an inner field of the same name wins. Not copyable; destroy
/// on the thread that created it (it is meant to live on the stack).
class ScopedFields {
public:
    explicit ScopedFields(QJsonObject fields);
    /// One field, without building a JSON object: what every request does (its trace id).
    ScopedFields(QLatin1StringView name, QString value);
    ~ScopedFields();
    ScopedFields(const ScopedFields &) = delete;
    ScopedFields &operator=(const ScopedFields &) = delete;
};

} // namespace payonce::logging
