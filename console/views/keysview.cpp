#include "keysview.h"

#include "keystorebanner.h"
#include "reasondialog.h"
#include "tablepanel.h"

#include "console/models/idempotencyrecordmodel.h"
#include "console/models/localformat.h"
#include "console/net/agentclient.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUrl>
#include <QUrlQuery>
#include <QVBoxLayout>

namespace payonce::console {

KeysView::KeysView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_record(new IdempotencyRecordModel(this)), m_userId(new QLineEdit(this)),
      m_key(new QLineEdit(this)), m_unlock(new QPushButton(tr("Unlock…"), this)), m_explanation(new QLabel(this)),
      m_result(new QLabel(this)), m_keyStore(new KeyStoreBanner(client, this))
{
    setObjectName(QStringLiteral("keysView"));
    m_record->setObjectName(QStringLiteral("idempotencyRecordModel"));
    m_userId->setObjectName(QStringLiteral("keyUserId"));
    m_userId->setPlaceholderText(tr("user_id"));
    m_key->setObjectName(QStringLiteral("keyName"));
    m_key->setPlaceholderText(tr("Idempotency-Key (the order_no for payments)"));
    auto *lookup = new QPushButton(tr("Look up"), this);
    lookup->setObjectName(QStringLiteral("keyLookup"));
    connect(lookup, &QPushButton::clicked, this, &KeysView::lookUpTyped);
    connect(m_key, &QLineEdit::returnPressed, this, &KeysView::lookUpTyped);

    m_unlock->setObjectName(QStringLiteral("unlockButton"));
    connect(m_unlock, &QPushButton::clicked, this, &KeysView::askUnlock);
    m_explanation->setObjectName(QStringLiteral("unlockExplanation"));
    m_explanation->setWordWrap(true);
    m_result->setObjectName(QStringLiteral("keyResult"));
    m_result->setWordWrap(true);

    auto *query = new QHBoxLayout;
    query->addWidget(new QLabel(tr("User"), this));
    query->addWidget(m_userId);
    query->addWidget(new QLabel(tr("Key"), this));
    query->addWidget(m_key, 2);
    query->addWidget(lookup);

    auto *actions = new QHBoxLayout;
    actions->addWidget(m_unlock);
    actions->addWidget(m_explanation, 1);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_keyStore);
    layout->addLayout(query);
    layout->addWidget(new TablePanel(QStringLiteral("key"), m_record, this), 1);
    layout->addLayout(actions);
    layout->addWidget(m_result);
    showUnlockState();
}

void KeysView::lookUp(const QString &userId, const QString &key)
{
    m_userId->setText(userId);
    m_key->setText(key);
    lookUpTyped();
}

void KeysView::lookUpTyped()
{
    const QString userId = m_userId->text().trimmed();
    const QString key = m_key->text();
    QUrlQuery query;
    query.addQueryItem(QStringLiteral("user_id"), userId);
    query.addQueryItem(QStringLiteral("key"), key);
    m_result->setText(tr("Looking up %1 / %2…").arg(userId, key));
    m_client->get(
        QStringLiteral("/api/v1/idempotency-keys?") + query.toString(QUrl::FullyEncoded), this,
        [this, userId, key](const ApiResult &result) {
            if (!result.ok()) {
                m_record->setRows(QList<QJsonObject>{});
                m_result->setText(result.error.httpStatus == 404
                                      ? tr("No record for user %1 and key %2 (none, or released).").arg(userId, key)
                                      : result.error.describe());
                showUnlockState();
                return;
            }
            m_record->setRows(QList<QJsonObject>{result.json.object()});
            m_result->setText(tr("Record of user %1, key %2: %3.")
                                  .arg(userId, key, result.json.object().value(QStringLiteral("status")).toString()));
            showUnlockState();
        });
}

void KeysView::showUnlockState(const QString &refusal)
{
    const QString blocker = IdempotencyRecordModel::unlockBlocker(m_record->record());
    m_unlock->setEnabled(blocker.isEmpty());
    if (!refusal.isEmpty())
        m_explanation->setText(tr("The agent refused: %1").arg(refusal));
    else if (!blocker.isEmpty())
        m_explanation->setText(blocker);
    else
        m_explanation->setText(tr("In flight: the agent releases it only past its lock timeout (a request that "
                                  "died holding it); a live request keeps it."));
    m_unlock->setToolTip(m_explanation->text());
}

void KeysView::askUnlock()
{
    const QJsonObject record = m_record->record();
    if (!IdempotencyRecordModel::unlockBlocker(record).isEmpty())
        return;
    const QString userId = JsonTableModel::displayText(record.value(QStringLiteral("user_id")));
    const QString key = record.value(QStringLiteral("key")).toString();
    auto *dialog = new ReasonDialog(
        tr("Unlock %1 / %2").arg(userId, key),
        tr("The in_flight record of user %1, key %2 (locked at %3) is deleted, so the client's next retry with this "
           "key "
           "is processed afresh. The agent refuses if it is not past its lock timeout.")
            .arg(userId, key, localTime(record.value(QStringLiteral("locked_at")).toString())),
        false, this);
    connect(dialog, &QDialog::accepted, this, [this, dialog, userId, key] { unlock(userId, key, dialog->reason()); });
    dialog->open();
}

void KeysView::unlock(const QString &userId, const QString &key, const QString &reason)
{
    const QString path = QStringLiteral("/api/v1/idempotency-keys/%1/%2/unlock")
                             .arg(QString::fromLatin1(QUrl::toPercentEncoding(userId)),
                                  QString::fromLatin1(QUrl::toPercentEncoding(key)));
    m_result->setText(tr("Unlocking %1 / %2…").arg(userId, key));
    m_client->post(
        path, QJsonObject{{QStringLiteral("reason"), reason}}, this, [this, userId, key](const ApiResult &result) {
            if (!result.ok()) {
                m_result->setText(result.error.describe());
                showUnlockState(result.error.message.isEmpty() ? result.error.describe() : result.error.message);
                return;
            }
            m_result->setText(tr("Unlocked %1 / %2: the record is released.").arg(userId, key));
            // The agent's view after the release (a 404: no record any more).
            m_client->get(
                QStringLiteral("/api/v1/idempotency-keys?user_id=%1&key=%2")
                    .arg(QString::fromLatin1(QUrl::toPercentEncoding(userId)),
                         QString::fromLatin1(QUrl::toPercentEncoding(key))),
                this, [this, userId, key](const ApiResult &after) {
                    if (after.ok()) {
                        m_record->setRows(QList<QJsonObject>{after.json.object()});
                    } else if (after.error.httpStatus == 404) {
                        m_record->setRows(QList<QJsonObject>{});
                        m_result->setText(
                            tr("Unlocked %1 / %2: released — the agent has no record of it now.").arg(userId, key));
                    }
                    showUnlockState();
                });
        });
}

} // namespace payonce::console
