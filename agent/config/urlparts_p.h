#pragma once

// Small pieces shared by the parsers of HostPort, DatabaseUrl, RedisUrl and the config
// loader. Private to payonce_config.

#include <QString>
#include <QStringView>

#include <optional>

namespace payonce::config::detail {

/// Strictly decimal digits, at most maxDigits of them: no sign, no spaces, no "0x"
/// (QString::toInt would accept " +80").
std::optional<qint64> parseDigits(QStringView text, int maxDigits);

/// "user:password" before the last '@' of an authority, percent-decoded (UTF-8).
struct UserInfo {
    QString user;
    QString password;
};

/// Splits "[userinfo@]rest" at the last '@', so a password may hold a raw '@'. Without an
/// '@' the user info is empty and rest is the whole text.
UserInfo takeUserInfo(QStringView &rest);

} // namespace payonce::config::detail
