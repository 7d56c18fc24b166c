#include "auditfilterproxy.h"

#include "auditmodel.h"

namespace payonce::console {

AuditFilterProxy::AuditFilterProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
}

void AuditFilterProxy::setTargetContains(const QString &text)
{
    if (text == m_target)
        return;
    m_target = text;
    invalidateRowsFilter();
}

void AuditFilterProxy::setUntil(const QDateTime &until)
{
    if (until == m_until)
        return;
    m_until = until;
    invalidateRowsFilter();
}

bool AuditFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const auto *audit = qobject_cast<const AuditModel *>(sourceModel());
    if (!audit || sourceParent.isValid())
        return true;
    const QJsonObject row = audit->rowObject(sourceRow);
    if (!m_target.isEmpty() && !row.value(QStringLiteral("target")).toString().contains(m_target, Qt::CaseInsensitive))
        return false;
    if (m_until.isValid()) {
        // A time the agent wrote in another form is kept: hiding a line of the trail
        // would be worse than showing one too many.
        const QDateTime at = QDateTime::fromString(row.value(QStringLiteral("at")).toString(), Qt::ISODateWithMs);
        if (at.isValid() && at > m_until)
            return false;
    }
    return true;
}

} // namespace payonce::console
