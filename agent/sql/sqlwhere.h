#pragma once

#include <QString>
#include <QStringList>
#include <QVariantList>

namespace payonce::sql {

/// A WHERE clause made of the filters a listing was given (each "column = ?"-style clause
/// with its bind), for the operator API's listings. Clauses are joined by AND; no filter
/// gives an empty clause. Values are always bound, never spliced into the text.
class WhereClause {
public:
    /// Adds `clause` (one '?') with `bind` when `wanted`.
    WhereClause &add(bool wanted, const QString &clause, const QVariant &bind)
    {
        if (wanted) {
            m_clauses.append(clause);
            m_binds.append(bind);
        }
        return *this;
    }
    /// "" or "WHERE a AND b".
    QString sql() const
    {
        return m_clauses.isEmpty() ? QString() : QStringLiteral("WHERE ") + m_clauses.join(QStringLiteral(" AND "));
    }
    const QVariantList &binds() const { return m_binds; }

private:
    QStringList m_clauses;
    QVariantList m_binds;
};

} // namespace payonce::sql
