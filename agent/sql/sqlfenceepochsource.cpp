#include "sqlfenceepochsource.h"

#include <QSqlQuery>

#include <limits>

namespace payonce::sql {

namespace {

core::Result<quint32> checkedEpoch(qint64 epoch)
{
    if (epoch <= 0 || epoch > std::numeric_limits<quint32>::max()) {
        return core::Error::make(core::ErrorCode::Internal,
                                 QStringLiteral("fence epoch %1 is outside 1..2^32-1").arg(epoch));
    }
    return quint32(epoch);
}

} // namespace

core::Result<quint32> SqlFenceEpochSource::newEpoch(const QString &keyStoreInstanceId, const QString &reason)
{
    if (keyStoreInstanceId.isEmpty() || keyStoreInstanceId.size() > 128) {
        return core::Error::make(core::ErrorCode::InvalidInput,
                                 QStringLiteral("a key-store instance id has 1 to 128 characters"));
    }
    if (reason.isEmpty() || reason.size() > 32)
        return core::Error::make(core::ErrorCode::InvalidInput,
                                 QStringLiteral("a fence epoch reason has 1 to 32 characters"));
    return m_database.write([&](Session &session) -> core::Result<quint32> {
        const bool postgres = session.dialect() == Dialect::PostgreSql;
        auto query = session.exec(
            QStringLiteral("INSERT INTO fence_epochs (instance_id, reason, created_at) VALUES (?, ?, ?)")
                + (postgres ? QStringLiteral(" RETURNING epoch") : QString()),
            {keyStoreInstanceId, reason, session.nowMs()}, QStringLiteral("hand out a fence epoch"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (postgres)
            return checkedEpoch(q.next() ? q.value(0).toLongLong() : 0);
        return checkedEpoch(q.lastInsertId().toLongLong());
    });
}

core::Result<quint32> SqlFenceEpochSource::largestEpoch()
{
    return m_database.read([&](Session &session) -> core::Result<quint32> {
        auto query = session.exec(QStringLiteral("SELECT MAX(epoch) FROM fence_epochs"), {},
                                  QStringLiteral("read the largest fence epoch"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (!q.next() || q.value(0).isNull())
            return quint32(0);
        return checkedEpoch(q.value(0).toLongLong());
    });
}

} // namespace payonce::sql
