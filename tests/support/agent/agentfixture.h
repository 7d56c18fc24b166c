#pragma once

// One agent on a migrated database, as every suite that drives the real agent starts it:
// the dialect's server, the schema, payonce-agent (with payonce-sim unless told otherwise)
// on free ports, stopped cleanly at the end. With it the shared vocabulary of those
// suites: the four tokens the agent is configured with, their Authorization headers, an
// answer described for a failure message, and row counts on the agent's database.

#include "agentprocess.h"
#include "storagefixture.h"
#include "support/serverharness.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QVariantList>

#include <memory>

namespace payonce::testsupport {

/// The four API tokens AgentProcess writes into every agent's auth.tokens.
inline constexpr char kViewToken[] = "view-token"; ///< viewer
inline constexpr char kDeskToken[] = "desk-token"; ///< operator
inline constexpr char kLeadToken[] = "lead-token"; ///< approver (the second pair of eyes)
inline constexpr char kQaToken[] = "qa-token";     ///< operator, and qa.token

using Headers = QList<QPair<QByteArray, QByteArray>>;

/// `Authorization: Bearer token` as the one header of a request.
Headers bearer(const QByteArray &token);

/// The Authorization header of each role, for AgentProcess::call().
inline const Headers kView = bearer(kViewToken);
inline const Headers kDesk = bearer(kDeskToken);
inline const Headers kLead = bearer(kLeadToken);

/// The simulator's notification pace most suites want: the first notification at once,
/// the platform's retry schedule × 0.001 (AgentProcess::Options::simNotifyTimeScale).
inline constexpr char kFastSimulator[] = "0.001";

/// An answer for a failure message: its status, the layer that decided it (when the agent
/// named one in X-Payonce-Layer) and its body.
QString describe(const HttpAnswer &answer);

class AgentFixture {
public:
    /// The dialect's database started and migrated, then the agent on it with `options`
    /// (options.db is the fixture's). False, with error(), when either did not come up.
    bool start(Dialect dialect, AgentProcess::Options options);
    /// The same on the dialect this test binary was registered for.
    bool start(AgentProcess::Options options) { return start(dialectUnderTest(), std::move(options)); }
    /// The database alone, for suites whose agents come and go inside their tests
    /// (startAnother()): several at once, one killed and restarted, one per configuration.
    bool startDatabase(Dialect dialect = dialectUnderTest());
    /// An agent on the fixture's database (options.db is the fixture's); null and a warning
    /// with the agent's output when it did not come up. Its owner stops it.
    std::unique_ptr<AgentProcess> startAnother(AgentProcess::Options options) const;
    /// Why start() failed, for QVERIFY2.
    const char *error() const { return m_errorText.constData(); }

    /// SIGTERM to the agent, and the test fails unless it exited with 0: an unclean stop
    /// (a crash on shutdown, a hang) is a defect like any other.
    void stop();

    explicit operator bool() const { return m_agent != nullptr; }
    AgentProcess *operator->() const { return m_agent.get(); }
    AgentProcess &operator*() const { return *m_agent; }

    sql::Database &database() const { return *m_db.database; }
    TestDatabase &server() const { return *m_db.server; }

    /// PUT /api/v1/mode as the operator (kDesk): the callbacks mode ("accept_only",
    /// "normal") and the reason the audit log keeps for it.
    HttpAnswer setCallbackMode(const QString &mode, const QString &reason) const;

    /// SELECT COUNT(*) with binds on the agent's database; -1 and a warning on error (the
    /// test then fails on its comparison).
    qint64 count(const QString &sql, const QVariantList &binds = {}) const;
    qint64 count(const char *sql, const QVariantList &binds = {}) const;

    /// One write statement (test set-up by raw SQL) in its own transaction; false and a
    /// warning with the database's reason when it failed.
    bool exec(const QString &sql, const QVariantList &binds = {}) const;
    bool exec(const char *sql, const QVariantList &binds = {}) const;
    /// The first column of the first row as text (firstValueText()).
    QString text(const QString &sql, const QVariantList &binds = {}) const;

private:
    MigratedDatabase m_db;
    std::unique_ptr<AgentProcess> m_agent;
    QByteArray m_errorText;
};

} // namespace payonce::testsupport
