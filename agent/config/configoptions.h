#pragma once

#include <QString>
#include <QStringView>

#include <span>

namespace payonce::config {

/// How a setting's text is read and checked. Strings from the environment and flags are
/// converted to the same JSON value a config file would hold, so one set of checks runs.
enum class OptionKind {
    ConfigFile, ///< --config / PAYONCE_CONFIG itself; not a key of the file
    String,
    Secret,   ///< a string that is never printed, not even its default
    Path,     ///< a file or folder; relative in the config file = relative to the file
    Database, ///< a database URL; a relative sqlite: path in the file is resolved like Path
    Integer,
    Boolean,      ///< env: 1/0, true/false, yes/no, on/off
    AuthTokens,   ///< array of {name, role, sha256}; env: the same array as JSON text
    PlatformKeys, ///< array of {serial, public_key}; env: the same array as JSON text
    UrlList,      ///< array of http(s) URL strings; env: the same array as JSON text
    SubnetList,   ///< array of "address/prefix" strings; env: the same array as JSON text
    HostPortList, ///< array of "host:port" strings; env: the same array as JSON text
};

/// One row of the settings table. The table is the single source for the config file's
/// keys, the environment variables (envName()), the flags and --help, so they cannot drift.
struct OptionSpec {
    QStringView key;  ///< key path in the config file: "wechat.apiv3_key"
    QStringView flag; ///< long flag without "--"; empty: no flag (secrets, lists)
    OptionKind kind;
    QStringView valueName;   ///< for --help: "HOST:PORT"
    QStringView defaultText; ///< for --help; empty: no default
    QStringView description; ///< one sentence for --help
};

/// Every setting, in --help order.
std::span<const OptionSpec> optionTable();

/// The row for a key path, or nullptr.
const OptionSpec *findOption(QStringView key);

/// "PAYONCE_" + the key upper-cased with '.' as '_': "wechat.apiv3_key" ->
/// "PAYONCE_WECHAT_APIV3_KEY"; "config" -> "PAYONCE_CONFIG".
QString envName(const OptionSpec &option);

/// The full --help text for programName, generated from optionTable().
QString helpText(const QString &programName);

/// "payonce-agent 0.1.0" style version line.
QString versionText(const QString &programName);

} // namespace payonce::config
