#include "agentfixture.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <QDebug>
#include <QTest>

namespace payonce::testsupport {

Headers bearer(const QByteArray &token)
{
    return {{"Authorization", "Bearer " + token}};
}

QString describe(const HttpAnswer &answer)
{
    const QByteArray layer = answer.header("X-Payonce-Layer");
    return layer.isEmpty() ? QStringLiteral("%1 %2").arg(answer.status).arg(QString::fromUtf8(answer.body))
                           : QStringLiteral("%1 layer=%2 %3")
                                 .arg(answer.status)
                                 .arg(QString::fromLatin1(layer), QString::fromUtf8(answer.body));
}

bool AgentFixture::startDatabase(Dialect dialect)
{
    QString error;
    m_db = MigratedDatabase::start(dialect, &error);
    if (!m_db)
        m_errorText = error.toUtf8();
    return bool(m_db);
}

bool AgentFixture::start(Dialect dialect, AgentProcess::Options options)
{
    if (!startDatabase(dialect))
        return false;
    QString error;
    options.db = m_db.server->url();
    m_agent = AgentProcess::start(options, &error);
    if (!m_agent)
        m_errorText = error.toUtf8();
    return m_agent != nullptr;
}

std::unique_ptr<AgentProcess> AgentFixture::startAnother(AgentProcess::Options options) const
{
    options.db = m_db.server->url();
    QString error;
    auto agent = AgentProcess::start(options, &error);
    if (!agent)
        qWarning().noquote() << error;
    return agent;
}

void AgentFixture::stop()
{
    if (m_agent)
        QCOMPARE(m_agent->stop(), 0);
}

HttpAnswer AgentFixture::setCallbackMode(const QString &mode, const QString &reason) const
{
    const QJsonObject body{{QStringLiteral("callbacks"), mode}, {QStringLiteral("reason"), reason}};
    return m_agent->call("PUT", QStringLiteral("/api/v1/mode"), QJsonDocument(body).toJson(QJsonDocument::Compact),
                         kDesk);
}

qint64 AgentFixture::count(const QString &sql, const QVariantList &binds) const
{
    return countRowsOrWarn(*m_db.database, sql, binds);
}

qint64 AgentFixture::count(const char *sql, const QVariantList &binds) const
{
    return count(QString::fromUtf8(sql), binds);
}

bool AgentFixture::exec(const QString &sql, const QVariantList &binds) const
{
    const auto done = execSql(*m_db.database, sql, binds);
    if (!done.ok())
        qWarning().noquote() << "exec failed:" << sql << done.error().internalMessage;
    return done.ok();
}

bool AgentFixture::exec(const char *sql, const QVariantList &binds) const
{
    return exec(QString::fromUtf8(sql), binds);
}

QString AgentFixture::text(const QString &sql, const QVariantList &binds) const
{
    return firstValueText(*m_db.database, sql, binds);
}

} // namespace payonce::testsupport
