#include "sqlfindingreader.h"

#include "sqlfindings.h"

namespace payonce::sql {

core::Result<QList<core::StoredFinding>> SqlFindingReader::list(const core::FindingQuery &query)
{
    return m_database.read([&](Session &session) { return listFindings(session, query); });
}

} // namespace payonce::sql
