#include "callbacksview.h"

#include "reasondialog.h"
#include "tablepanel.h"

#include "console/models/callbackdeliveriesmodel.h"
#include "console/net/agentclient.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QUrlQuery>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

QString describeOutcome(const QJsonObject &answer)
{
    QString text = QObject::tr("outcome %1, decided by the layer %2")
                       .arg(answer.value(QStringLiteral("outcome")).toString(),
                            answer.value(QStringLiteral("layer")).toString());
    const QString note = answer.value(QStringLiteral("note")).toString();
    if (!note.isEmpty())
        text += QObject::tr(" (%1)").arg(note);
    return text;
}

} // namespace

CallbacksView::CallbacksView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_deliveries(new CallbackDeliveriesModel(this)), m_query(new QLineEdit(this)),
      m_queryKind(new QComboBox(this)), m_log(new QLabel(this)), m_result(new QLabel(this)),
      m_replay(new QPushButton(tr("Replay…"), this))
{
    setObjectName(QStringLiteral("callbacksView"));
    m_deliveries->setObjectName(QStringLiteral("deliveriesModel"));
    m_panel = new TablePanel(QStringLiteral("deliveries"), m_deliveries, this);
    m_query->setObjectName(QStringLiteral("callbackQuery"));
    m_query->setPlaceholderText(tr("pay_no or order_no"));
    m_queryKind->setObjectName(QStringLiteral("callbackQueryKind"));
    m_queryKind->addItem(QStringLiteral("pay_no"));
    m_queryKind->addItem(QStringLiteral("order_no"));
    auto *searchButton = new QPushButton(tr("Search"), this);
    searchButton->setObjectName(QStringLiteral("callbackSearch"));
    m_log->setObjectName(QStringLiteral("callbackLog"));
    m_log->setWordWrap(true);
    m_result->setObjectName(QStringLiteral("replayResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_replay->setObjectName(QStringLiteral("replayButton"));
    m_replay->setToolTip(tr("Run the selected delivery's stored callback through the pipeline again"));

    connect(m_query, &QLineEdit::returnPressed, this, &CallbacksView::search);
    connect(searchButton, &QPushButton::clicked, this, &CallbacksView::search);
    connect(m_replay, &QPushButton::clicked, this, &CallbacksView::replaySelected);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_queryKind);
    bar->addWidget(m_query, 1);
    bar->addWidget(searchButton);
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_replay);
    actions->addWidget(m_result, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_log);
    layout->addWidget(m_panel, 1);
    layout->addLayout(actions);
}

void CallbacksView::search()
{
    const QString value = m_query->text().trimmed();
    if (value.isEmpty()) {
        m_log->setText(tr("Type a pay_no or an order_no."));
        return;
    }
    QUrlQuery query;
    query.addQueryItem(m_queryKind->currentText(), value);
    m_log->setText(tr("Searching…"));
    m_client->get(QStringLiteral("/api/v1/callbacks?") + query.toString(QUrl::FullyEncoded), this,
                  [this](const ApiResult &result) {
                      if (!result.ok()) {
                          m_deliveries->setRows(QList<QJsonObject>{});
                          m_log->setText(result.error.describe());
                          return;
                      }
                      const QJsonObject answer = result.json.object();
                      m_deliveries->setRows(answer.value(QStringLiteral("deliveries")).toArray());
                      QStringList rows;
                      for (const QJsonValue &row : answer.value(QStringLiteral("log")).toArray()) {
                          const QJsonObject log = row.toObject();
                          rows << tr("%1 %2: %3")
                                      .arg(log.value(QStringLiteral("channel")).toString(),
                                           log.value(QStringLiteral("pay_no")).toString(),
                                           log.value(QStringLiteral("status")).toString());
                      }
                      m_log->setText(tr("%n delivery(s). Callback log: %1", nullptr, m_deliveries->rowCount())
                                         .arg(rows.isEmpty() ? tr("no row") : rows.join(QStringLiteral("; "))));
                  });
}

void CallbacksView::replaySelected()
{
    int row = m_panel->currentSourceRow();
    if (row < 0 && m_deliveries->rowCount() > 0)
        row = 0;
    const QJsonObject delivery = m_deliveries->rowObject(row);
    const QString channel = delivery.value(QStringLiteral("channel")).toString();
    const QString payNo = delivery.value(QStringLiteral("pay_no")).toString();
    if (channel.isEmpty() || payNo.isEmpty()) {
        m_result->setText(tr("Select a delivery with a pay_no to replay."));
        return;
    }
    auto *dialog = new ReasonDialog(tr("Replay %1").arg(payNo),
                                    tr("The stored %1 callback of %2 runs through the whole pipeline again. "
                                       "A dry run shows first what it would do.")
                                        .arg(channel, payNo),
                                    false, this);
    connect(dialog, &QDialog::accepted, this,
            [this, dialog, channel, payNo] { runReplay(channel, payNo, dialog->reason(), true); });
    dialog->open();
}

void CallbacksView::runReplay(const QString &channel, const QString &payNo, const QString &reason, bool dryRun)
{
    m_result->setText(dryRun ? tr("Dry run of %1…").arg(payNo) : tr("Replaying %1…").arg(payNo));
    const QString path = QStringLiteral("/api/v1/callbacks/%1/%2/replay%3")
                             .arg(channel, payNo, dryRun ? QStringLiteral("?dry_run=true") : QString());
    m_client->post(path, QJsonObject{{QStringLiteral("reason"), reason}}, this,
                   [this, channel, payNo, reason, dryRun](const ApiResult &result) {
                       if (!result.ok()) {
                           m_result->setText(result.error.describe());
                           return;
                       }
                       const QJsonObject answer = result.json.object();
                       if (dryRun) {
                           confirmReplay(channel, payNo, reason, answer);
                           return;
                       }
                       m_result->setText(tr("Replayed %1: %2.").arg(payNo, describeOutcome(answer)));
                       search();
                   });
}

void CallbacksView::confirmReplay(const QString &channel, const QString &payNo, const QString &reason,
                                  const QJsonObject &dryRun)
{
    QStringList changes;
    for (const QJsonValue &change : dryRun.value(QStringLiteral("changes")).toArray())
        changes << QStringLiteral("• ") + change.toString();
    const QString text = tr("Dry run of %1: %2.\n\nRows that would change:\n%3\n\nReplay for real?")
                             .arg(payNo, describeOutcome(dryRun), changes.isEmpty() ? tr("none") : changes.join(u'\n'));
    m_result->setText(tr("Dry run of %1: %2.").arg(payNo, describeOutcome(dryRun)));
    auto *box = new QMessageBox(QMessageBox::Question, tr("Replay %1?").arg(payNo), text,
                                QMessageBox::Ok | QMessageBox::Cancel, this);
    box->setObjectName(QStringLiteral("replayConfirmDialog"));
    box->button(QMessageBox::Ok)->setText(tr("Replay"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    // QMessageBox finishes with the button's code, not QDialog::Accepted: ask which was clicked.
    connect(box, &QMessageBox::buttonClicked, this, [this, box, channel, payNo, reason](QAbstractButton *clicked) {
        if (clicked == box->button(QMessageBox::Ok))
            runReplay(channel, payNo, reason, false);
        else
            m_result->setText(tr("Replay of %1 cancelled after the dry run.").arg(payNo));
    });
    box->open();
}

} // namespace payonce::console
