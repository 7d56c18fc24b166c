#include "databaseserver.h"

#include "serverharness.h"

using namespace Qt::StringLiterals;

namespace payonce::testsupport {

using namespace detail;

bool DatabaseServerState::prepare(QString *error)
{
    folder = ScratchFolder::create(kind.folderKind, kind.serviceUser, error);
    if (!folder)
        return false;
    password = randomHex();
    return true;
}

bool DatabaseServerState::launchOnFreePort(QString *error)
{
    return retryOnBindFailure([&] {
               port = freeLoopbackPort();
               return launch(error);
           })
           == Readiness::Ready;
}

DatabaseServer::DatabaseServer(std::unique_ptr<DatabaseServerState> state) : m_state(std::move(state))
{
}

DatabaseServer::~DatabaseServer()
{
    if (m_state->folder)
        m_state->halt(m_state->kind.killSignal);
}

int DatabaseServer::port() const
{
    return m_state->port;
}

QString DatabaseServer::user() const
{
    return databaseUser;
}

QString DatabaseServer::password() const
{
    return m_state->password;
}

QString DatabaseServer::database() const
{
    return databaseName;
}

QString DatabaseServer::url() const
{
    return urlWithPassword(m_state->password);
}

QString DatabaseServer::urlWithPassword(const QString &password) const
{
    return u"%1://%2:%3@127.0.0.1:%4/%5"_s.arg(m_state->kind.scheme, databaseUser, password,
                                               QString::number(m_state->port), databaseName);
}

QString DatabaseServer::folder() const
{
    return m_state->folder->path();
}

bool DatabaseServer::stop()
{
    return m_state->halt(m_state->kind.stopSignal);
}

bool DatabaseServer::startAgain(QString *error)
{
    if (pidAlive(m_state->serverPid())) {
        *error = u"%1 is still running on port %2"_s.arg(m_state->kind.serverName, QString::number(m_state->port));
        return false;
    }
    return m_state->launch(error) == Readiness::Ready;
}

QString DatabaseServer::logTail(int lines) const
{
    return tailOfFile(m_state->logFile(), lines);
}

} // namespace payonce::testsupport
