#pragma once

#include "session.h"

#include <QList>
#include <QString>
#include <QVariantList>

namespace payonce::sql {

/// One write of a group: a plain INSERT … ON CONFLICT DO NOTHING (insertIfAbsentSql) or
/// UPDATE, without RETURNING, and its binds.
struct GroupedWrite {
    QString sql;
    QVariantList binds;
};

/// Writes that need nothing from each other, in as few round trips as the dialect allows:
/// on PostgreSQL one statement, `WITH w0 AS (… RETURNING 1), w1 AS (…) SELECT (SELECT
/// count(*) FROM w0), …` (its parts see one snapshot, so no part may read what another
/// writes); elsewhere one statement each, in order. Each write's count of rows written, in
/// the order given. Kept prepared like every statement (Session::forEachRow).
core::Result<QList<int>> execGrouped(Session &session, const QList<GroupedWrite> &writes, const QString &what);

/// Placeholders for a SELECT list that feeds an INSERT (`INSERT … SELECT`): there a bare
/// parameter has no column to take its type from, so each is CAST(? AS type), one per type,
/// comma-separated.
QString castParameters(const QStringList &types);

} // namespace payonce::sql
