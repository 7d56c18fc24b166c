#pragma once

#include "session.h"

#include "core/ports/findingreader.h"
#include "core/settlement/finding.h"

#include <QStringList>

namespace payonce::sql {

/// The one finding upsert, shared by the callback path and the patrol, inside the caller's
/// unit of work: insert-if-absent on (kind, subject); if the row was there, seen_count + 1,
/// last_seen_at and evidence updated, and a resolved finding opened again (the condition
/// is back). Answers the finding's id.
core::Result<qint64> upsertFinding(Session &session, const core::Finding &finding, qint64 nowMs,
                                   bool *inserted = nullptr);

/// Open findings of these kinds not seen at or after `seenSinceMs` become resolved
/// (resolved_at = nowMs). Answers how many.
core::Result<int> resolveFindingsNotSeenSince(Session &session, const QStringList &kinds, qint64 seenSinceMs,
                                              qint64 nowMs);

/// One finding by id (in any state); NotFound if absent.
core::Result<core::StoredFinding> readFinding(Session &session, qint64 id);

/// Findings matching the query, most recently seen first (limit clamped to 1-1000).
core::Result<QList<core::StoredFinding>> listFindings(Session &session, const core::FindingQuery &query);

} // namespace payonce::sql
