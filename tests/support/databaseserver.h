#pragma once

// Internal to payonce_testsupport: what PostgresServer and MariaDbServer keep alike, the
// state behind DatabaseServer (serverharness.h). Each server's Private derives from it.

#include "processtools.h"
#include "scratchfolder.h"

#include <memory>

namespace payonce::testsupport::detail {

/// The user and the database every DatabaseServer creates.
inline const QString databaseUser = QStringLiteral("payonce");
inline const QString databaseName = QStringLiteral("payonce");

struct DatabaseServerState {
    struct Kind {
        QString scheme;      ///< of url(): "postgresql", "mariadb"
        QString serverName;  ///< in messages: "PostgreSQL", "mariadbd"
        QString folderKind;  ///< the scratch folder's <kind>: "pg", "mariadb"
        QString serviceUser; ///< the user the server runs as when we are root
        int stopSignal;      ///< stop(): the shutdown that keeps the data
        int killSignal;      ///< the destructor's: no goodbye, the data is deleted right after
    };
    explicit DatabaseServerState(Kind serverKind) : kind(std::move(serverKind)) {}
    virtual ~DatabaseServerState() = default;

    const Kind kind;
    std::unique_ptr<ScratchFolder> folder;
    QString password;
    int port = 0;

    /// The server's log (what start errors and logTail() show).
    virtual QString logFile() const = 0;
    /// The running server's pid, 0 when none.
    virtual qint64 serverPid() const = 0;
    /// Starts the server on port (the data directory exists), waits until it is ready.
    virtual Readiness launch(QString *error) = 0;
    /// Sends signal to the server and waits until it is gone.
    virtual bool halt(int signal) = 0;

    /// The scratch folder (<tmp>/payonce-<kind>-XXXXXX, the service user's when root) and
    /// a generated password.
    bool prepare(QString *error);
    /// launch() on fresh free ports until one is not taken meanwhile (portAttempts at most).
    bool launchOnFreePort(QString *error);
};

} // namespace payonce::testsupport::detail
