#include "outboxview.h"

#include "liverefresh.h"
#include "reasondialog.h"
#include "tablepanel.h"

#include "console/models/outboxmodel.h"
#include "console/net/agentclient.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <memory>

namespace payonce::console {

namespace {

constexpr int kListLimit = 200;

/// What one choice of the status box fetches; "open" also keeps delivered events that
/// were re-driven, so an operator sees where a re-drive ended.
struct Listing {
    QStringList statuses;
    bool deliveredOnlyIfRedriven = false;
};

Listing listingFor(const QString &choice)
{
    if (choice == u"open")
        return {{QStringLiteral("dead"), QStringLiteral("pending"), QStringLiteral("delivered")}, true};
    return {{choice}, false};
}

} // namespace

OutboxView::OutboxView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_events(new OutboxModel(this)), m_status(new QComboBox(this)),
      m_redrive(new QPushButton(tr("Re-drive…"), this)), m_result(new QLabel(this))
{
    setObjectName(QStringLiteral("outboxView"));
    m_events->setObjectName(QStringLiteral("outboxModel"));
    m_panel = new TablePanel(QStringLiteral("outbox"), m_events, this);
    m_status->setObjectName(QStringLiteral("outboxStatus"));
    m_status->addItem(tr("Dead, pending and re-driven"), QStringLiteral("open"));
    m_status->addItem(tr("Dead"), QStringLiteral("dead"));
    m_status->addItem(tr("Pending"), QStringLiteral("pending"));
    m_status->addItem(tr("Delivered"), QStringLiteral("delivered"));
    connect(m_status, &QComboBox::currentIndexChanged, this, &OutboxView::refresh);
    m_redrive->setObjectName(QStringLiteral("redriveButton"));
    connect(m_redrive, &QPushButton::clicked, this, &OutboxView::askRedrive);
    m_result->setObjectName(QStringLiteral("redriveResult"));
    m_result->setWordWrap(true);
    connect(m_panel->table()->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &OutboxView::showRedriveState);
    connect(m_events, &QAbstractItemModel::modelReset, this, &OutboxView::showRedriveState);

    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setObjectName(QStringLiteral("refreshOutboxList"));
    connect(refreshButton, &QPushButton::clicked, this, &OutboxView::refresh);
    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Show"), this));
    top->addWidget(m_status);
    top->addStretch(1);
    top->addWidget(refreshButton);
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_redrive);
    actions->addWidget(m_result, 1);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_panel, 1);
    layout->addLayout(actions);
    m_live = new LiveRefresh(this, [this] { refresh(); });
    showRedriveState();
}

void OutboxView::applyMessage(const StreamMessage &message)
{
    // A dead letter is announced as it happens; pending and delivered rows move with the
    // counts of every metrics message (the agent reads them about once a second).
    const StreamMetrics *metrics = nullptr;
    if (const auto *snapshot = std::get_if<StreamSnapshot>(&message.body))
        metrics = &snapshot->metrics;
    else
        metrics = std::get_if<StreamMetrics>(&message.body);
    if (metrics) {
        const auto counts = std::make_pair(metrics->outboxPending, metrics->outboxDead);
        if (counts != m_counts) {
            m_counts = counts;
            m_live->changed();
        }
    } else if (const auto *event = std::get_if<StreamEvent>(&message.body);
               event && event->kind == streamevent::OutboxDeadLetter) {
        m_live->changed();
    }
}

void OutboxView::refresh()
{
    if (m_client->agentUrl().isEmpty())
        return;
    const Listing listing = listingFor(m_status->currentData().toString());
    const int generation = ++m_generation;
    // The answers arrive in any order: gathered here, shown when the last one is in.
    auto gathered = std::make_shared<QList<QJsonObject>>();
    auto remaining = std::make_shared<int>(int(listing.statuses.size()));
    for (const QString &status : listing.statuses) {
        m_client->get(QStringLiteral("/api/v1/outbox?status=%1&limit=%2").arg(status).arg(kListLimit), this,
                      [this, generation, gathered, remaining, listing](const ApiResult &result) {
                          if (generation != m_generation)
                              return;
                          if (result.ok()) {
                              for (const QJsonValue &value : result.json.array()) {
                                  const QJsonObject event = value.toObject();
                                  if (event.isEmpty())
                                      continue;
                                  if (listing.deliveredOnlyIfRedriven
                                      && event.value(QStringLiteral("status")).toString() == u"delivered"
                                      && !event.value(QStringLiteral("redriven")).toBool())
                                      continue;
                                  gathered->append(event);
                              }
                          }
                          if (--*remaining > 0)
                              return;
                          // A fresh list resets the model: the operator's selection survives it.
                          const qint64 selected =
                              m_events->rowObject(m_panel->currentSourceRow()).value(QStringLiteral("id")).toInteger();
                          m_events->setRows(*gathered);
                          if (selected > 0)
                              m_panel->selectSourceRow(m_events->rowOfId(selected));
                      });
    }
}

void OutboxView::showRedriveState()
{
    const QJsonObject event = m_events->rowObject(m_panel->currentSourceRow());
    const QString status = event.value(QStringLiteral("status")).toString();
    const bool dead = status == u"dead";
    m_redrive->setEnabled(dead);
    if (event.isEmpty())
        m_redrive->setToolTip(tr("Select a dead event to re-drive it."));
    else if (!dead)
        m_redrive->setToolTip(tr("Event %1 is %2: only a dead event can be re-driven.")
                                  .arg(event.value(QStringLiteral("id")).toInteger())
                                  .arg(status));
    else
        m_redrive->setToolTip(tr("Event %1 goes back to pending with fresh attempts.")
                                  .arg(event.value(QStringLiteral("id")).toInteger()));
}

void OutboxView::askRedrive()
{
    const QJsonObject event = m_events->rowObject(m_panel->currentSourceRow());
    const qint64 id = event.value(QStringLiteral("id")).toInteger();
    if (id <= 0 || event.value(QStringLiteral("status")).toString() != u"dead")
        return;
    auto *dialog = new ReasonDialog(
        tr("Re-drive event %1").arg(id),
        tr("%1 for %2 went dead after %3 attempts (last error: %4). It goes back to pending with fresh attempts and is "
           "delivered again with the same Idempotency-Key.")
            .arg(event.value(QStringLiteral("event_type")).toString(),
                 event.value(QStringLiteral("aggregate_id")).toString())
            .arg(event.value(QStringLiteral("attempts")).toInteger())
            .arg(event.value(QStringLiteral("last_error")).toString()),
        false, this);
    connect(dialog, &QDialog::accepted, this, [this, dialog, id] { redrive(id, dialog->reason()); });
    dialog->open();
}

void OutboxView::redrive(qint64 id, const QString &reason)
{
    m_result->setText(tr("Re-driving event %1…").arg(id));
    m_client->post(QStringLiteral("/api/v1/outbox/%1/redrive").arg(id), QJsonObject{{QStringLiteral("reason"), reason}},
                   this, [this, id](const ApiResult &result) {
                       if (!result.ok()) {
                           m_result->setText(result.error.describe());
                           return;
                       }
                       const QJsonObject event = result.json.object();
                       m_result->setText(tr("Event %1 re-driven: now %2, attempts %3.")
                                             .arg(id)
                                             .arg(event.value(QStringLiteral("status")).toString())
                                             .arg(event.value(QStringLiteral("attempts")).toInteger()));
                       refresh();
                   });
}

} // namespace payonce::console
