#include "sqlfenceepochsource.h"

#include "dialectsql.h"


#include <limits>

namespace payonce::sql {

core::Result<quint32> SqlFenceEpochSource::epochFor(const QString &keyStoreInstanceId)
{
    if (keyStoreInstanceId.isEmpty() || keyStoreInstanceId.size() > 128) {
        return core::Error::make(core::ErrorCode::InvalidInput,
                                 QStringLiteral("a key-store instance id has 1 to 128 characters"));
    }
    return m_database.write([&](Session &session) -> core::Result<quint32> {
        auto inserted = session.execAffected(
            insertIfAbsentSql(session.dialect(), QStringLiteral("fence_epochs"),
                              {QStringLiteral("instance_id"), QStringLiteral("created_at")}, QStringLiteral("epoch")),
            {keyStoreInstanceId, session.nowMs()}, QStringLiteral("register fence epoch"));
        if (!inserted)
            return inserted.error();
        auto query = session.exec(QStringLiteral("SELECT epoch FROM fence_epochs WHERE instance_id = ?"),
                                  {keyStoreInstanceId}, QStringLiteral("read fence epoch"));
        if (!query)
            return query.error();
        QSqlQuery &q = query.value();
        if (!q.next())
            return core::Error::make(core::ErrorCode::Internal, QStringLiteral("fence epoch row vanished"));
        const qint64 epoch = q.value(0).toLongLong();
        if (epoch <= 0 || epoch > std::numeric_limits<quint32>::max()) {
            return core::Error::make(core::ErrorCode::Internal,
                                     QStringLiteral("fence epoch %1 is outside 1..2^32-1").arg(epoch));
        }
        return quint32(epoch);
    });
}

} // namespace payonce::sql
