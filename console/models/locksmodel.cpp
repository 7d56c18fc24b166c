#include "locksmodel.h"

#include <QColor>
#include <QJsonArray>

namespace payonce::console {

LocksModel::LocksModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("key"), tr("Lock")},
                      {QStringLiteral("state"), tr("State")},
                      {QStringLiteral("fence_scope"), tr("Order")},
                      {QStringLiteral("fencing_token"), tr("Fencing token")},
                      {QStringLiteral("owner"), tr("Owner")},
                      {QStringLiteral("acquired_at"), tr("Acquired")},
                      {QStringLiteral("ttl_left_ms"), tr("TTL left (ms)")},
                      {QStringLiteral("renewals"), tr("Renewals")},
                      {QStringLiteral("reason"), tr("Lost because")}},
                     parent)
{
}

int LocksModel::rowOf(const QString &key) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (rowObject(row).value(QStringLiteral("key")).toString() == key)
            return row;
    }
    return -1;
}

void LocksModel::applyLockLost(const StreamEvent &event)
{
    if (event.subject.isEmpty())
        return;
    const int row = rowOf(event.subject);
    QJsonObject lock = row >= 0 ? rowObject(row) : QJsonObject{{QStringLiteral("key"), event.subject}};
    lock.insert(QStringLiteral("state"), QStringLiteral("lost"));
    lock.insert(QStringLiteral("owner"), event.actor);
    lock.insert(QStringLiteral("reason"), event.reason);
    // The detail's token arrives as text or number depending on the agent's writer.
    const QJsonValue token = event.detail.value(QStringLiteral("fencing_token"));
    if (token.isString() || token.isDouble())
        lock.insert(QStringLiteral("fencing_token"),
                    token.isString() ? token.toString() : QString::number(token.toInteger()));
    const QString scope = event.detail.value(QStringLiteral("fence_scope")).toString();
    if (!scope.isEmpty())
        lock.insert(QStringLiteral("fence_scope"), scope);
    if (row >= 0)
        replaceRow(row, lock);
    else
        prependRow(lock, 0);
}

QVariant LocksModel::cellRole(const QJsonObject &row, const QString &key, int role) const
{
    if (key == u"state" && role == Qt::ForegroundRole && row.value(key).toString() == u"lost")
        return QColor(0xd6, 0x27, 0x28);
    return {};
}

StoredLocksModel::StoredLocksModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("key"), tr("Lock")},
                      {QStringLiteral("node"), tr("Node")},
                      {QStringLiteral("owner"), tr("Owner")},
                      {QStringLiteral("ttl_left_ms"), tr("TTL left (ms)")},
                      {QStringLiteral("held_text"), tr("Held by this agent")},
                      {QStringLiteral("stuck_text"), tr("Stuck")}},
                     parent)
{
}

void StoredLocksModel::setScan(const QJsonArray &locks)
{
    QList<QJsonObject> rows;
    for (const QJsonValue &value : locks) {
        QJsonObject row = value.toObject();
        row.insert(QStringLiteral("held_text"),
                   row.value(QStringLiteral("held_by_this_agent")).toBool() ? tr("yes") : tr("no"));
        const QString reason = row.value(QStringLiteral("stuck_reason")).toString();
        QString stuck;
        if (reason == u"no_expiry")
            stuck = tr("never expires");
        else if (reason == u"ttl_above_lock_ttl")
            stuck = tr("expires later than any lock of ours");
        else if (!reason.isEmpty())
            stuck = reason;
        row.insert(QStringLiteral("stuck_text"), stuck);
        rows.append(row);
    }
    setRows(rows);
}

QVariant StoredLocksModel::cellRole(const QJsonObject &row, const QString &, int role) const
{
    if (role == Qt::ForegroundRole && row.value(QStringLiteral("stuck")).toBool())
        return QColor(0xd6, 0x27, 0x28);
    return {};
}

FencingTokensModel::FencingTokensModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("order_no"), tr("Order")}, {QStringLiteral("token"), tr("Last fencing token")}},
                     parent)
{
}

StaleRefusalsModel::StaleRefusalsModel(QObject *parent)
    : JsonTableModel({{QStringLiteral("at"), tr("At")},
                      {QStringLiteral("order_no"), tr("Order")},
                      {QStringLiteral("pay_no"), tr("pay_no")},
                      {QStringLiteral("fencing_token"), tr("Stale token")},
                      {QStringLiteral("agent"), tr("Refused by")}},
                     parent)
{
}

void StaleRefusalsModel::applyStaleRefused(const StreamMessage &message, const StreamEvent &event)
{
    const QJsonValue token = event.detail.value(QStringLiteral("fencing_token"));
    prependRow(
        {{QStringLiteral("at"), message.at.toString(Qt::ISODateWithMs)},
         {QStringLiteral("order_no"), event.subject},
         {QStringLiteral("pay_no"), event.value},
         {QStringLiteral("fencing_token"), token.isString() ? token.toString() : QString::number(token.toInteger())},
         {QStringLiteral("agent"), event.actor}},
        kMaxRows);
}

} // namespace payonce::console
