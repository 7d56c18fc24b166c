#pragma once

#include <QDateTime>
#include <QSortFilterProxyModel>

namespace payonce::console {

/// The audit trail's filters the API has not: a target containing a text (the API
/// matches targets exactly, an operator types part of one — an order, a pay_no) and an
/// end of the time range (the API has only `since`). Over an AuditModel; the actor,
/// action and start filters are the API's, applied by the fetch.
class AuditFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit AuditFilterProxy(QObject *parent = nullptr);

    /// Case-insensitive part of the target; empty: any.
    void setTargetContains(const QString &text);
    /// Rows at or before this instant; invalid: no end.
    void setUntil(const QDateTime &until);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_target;
    QDateTime m_until;
};

} // namespace payonce::console
