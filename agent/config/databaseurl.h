#pragma once

#include "core/common/result.h"

#include <QString>

namespace payonce::config {

/// Where the agent's database is, parsed from one of:
///   sqlite:PATH                                   (PATH as given; ":memory:" allowed)
///   postgresql://[user[:password]@]host[:port]/database    (also "postgres://")
///   mariadb://[user[:password]@]host[:port]/database       (also "mysql://")
/// user, password and database are percent-decoded ("p%40ss" is "p@ss"); an IPv6 host is
/// written in brackets ("[::1]") and stored without them. The port defaults to 5432
/// (PostgreSQL) or 3306 (MariaDB); for SQLite host/user/password are empty and port is 0.
/// Query strings ("?sslmode=...") are refused rather than silently ignored.
///
/// The password is a secret: use redacted() for anything that is logged or shown. Parse
/// errors (ErrorCode::Misconfigured) never quote the password either.
/// A plain value type; the SQL layer reads the public members directly.
struct DatabaseUrl {
    enum class Dialect {
        Sqlite,
        PostgreSql,
        MariaDb
    };

    Dialect dialect = Dialect::Sqlite;
    QString user;
    QString password;
    QString host;
    int port = 0;
    QString database;
    QString sqlitePath;

    static core::Result<DatabaseUrl> parse(const QString &text);

    /// The URL with the password masked: "postgresql://payonce:***@127.0.0.1:5432/payonce",
    /// "sqlite:./payonce-data/payonce.db". Without a password there is nothing to mask.
    QString redacted() const;

    /// "sqlite", "postgresql" or "mariadb" — the scheme written by redacted().
    static QString dialectName(Dialect dialect);

    bool operator==(const DatabaseUrl &) const = default;
};

} // namespace payonce::config
