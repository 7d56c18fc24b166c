#include "compensationsview.h"

#include "liverefresh.h"
#include "reasondialog.h"
#include "tablepanel.h"

#include "console/models/codelabels.h"
#include "console/models/compensationsmodel.h"
#include "console/models/findingsmodel.h"
#include "console/net/agentclient.h"

#include <QComboBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

namespace payonce::console {

CompensationsView::CompensationsView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_findings(new FindingsModel(this)),
      m_compensations(new CompensationsModel(this)), m_status(new QComboBox(this)), m_message(new QLabel(this))
{
    setObjectName(QStringLiteral("compensationsView"));
    m_findings->setObjectName(QStringLiteral("findingsModel"));
    m_compensations->setObjectName(QStringLiteral("compensationsModel"));
    m_findingsPanel = new TablePanel(QStringLiteral("findings"), m_findings, this);
    m_compensationsPanel = new TablePanel(QStringLiteral("compensations"), m_compensations, this);
    m_status->setObjectName(QStringLiteral("compensationStatus"));
    m_status->addItem(tr("proposed (the queue)"), QStringLiteral("proposed"));
    for (const char *status : {"executed", "approved", "rejected", "failed"})
        m_status->addItem(compensationStatusLabel(QLatin1String(status)), QLatin1String(status));
    m_status->addItem(tr("all"), QString());
    connect(m_status, &QComboBox::currentIndexChanged, this, &CompensationsView::refresh);
    m_message->setObjectName(QStringLiteral("decisionMessage"));
    m_message->setWordWrap(true);

    auto *approve = new QPushButton(tr("Approve…"), this);
    approve->setObjectName(QStringLiteral("approveButton"));
    connect(approve, &QPushButton::clicked, this, [this] { askDecision(true); });
    auto *reject = new QPushButton(tr("Reject…"), this);
    reject->setObjectName(QStringLiteral("rejectButton"));
    connect(reject, &QPushButton::clicked, this, [this] { askDecision(false); });
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setObjectName(QStringLiteral("refreshCompensations"));
    connect(refreshButton, &QPushButton::clicked, this, &CompensationsView::refresh);

    auto *findingsBox = new QGroupBox(tr("Open findings"), this);
    (new QVBoxLayout(findingsBox))->addWidget(m_findingsPanel);
    auto *compensationsBox = new QGroupBox(tr("Compensations"), this);
    auto *compensationsLayout = new QVBoxLayout(compensationsBox);
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Status"), compensationsBox));
    bar->addWidget(m_status);
    bar->addStretch(1);
    bar->addWidget(approve);
    bar->addWidget(reject);
    bar->addWidget(refreshButton);
    compensationsLayout->addLayout(bar);
    compensationsLayout->addWidget(m_compensationsPanel, 1);
    compensationsLayout->addWidget(m_message);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(findingsBox);
    splitter->addWidget(compensationsBox);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(splitter);
    m_live = new LiveRefresh(this, [this] { refresh(); });
}

void CompensationsView::applyMessage(const StreamMessage &message)
{
    const auto *event = std::get_if<StreamEvent>(&message.body);
    if (event
        && (event->kind == streamevent::FindingRaised || event->kind == streamevent::CompensationProposed
            || event->kind == streamevent::CompensationDecided))
        m_live->changed();
}

void CompensationsView::refresh()
{
    m_client->get(QStringLiteral("/api/v1/findings?status=open"), this, [this](const ApiResult &result) {
        if (result.ok())
            m_findings->setRows(result.json.array());
    });
    const QString status = m_status->currentData().toString();
    m_client->get(QStringLiteral("/api/v1/compensations")
                      + (status.isEmpty() ? QString() : QStringLiteral("?status=") + status),
                  this, [this](const ApiResult &result) {
                      if (result.ok())
                          m_compensations->setRows(result.json.array());
                  });
}

void CompensationsView::askDecision(bool approve)
{
    const QJsonObject row = m_compensations->rowObject(m_compensationsPanel->currentSourceRow());
    const qint64 id = row.value(QStringLiteral("id")).toInteger();
    if (id <= 0) {
        m_message->setText(tr("Select a compensation first."));
        return;
    }
    const QString what = tr("compensation %1 (%2 for %3, proposed by %4: %5)")
                             .arg(id)
                             .arg(row.value(QStringLiteral("kind")).toString(),
                                  row.value(QStringLiteral("order_no")).toString(),
                                  row.value(QStringLiteral("proposed_by")).toString(),
                                  row.value(QStringLiteral("proposal_reason")).toString());
    const QString explanation = approve ? tr("Approving executes %1 once.").arg(what)
                                        : tr("Rejecting closes %1.").arg(what);
    auto *dialog = new ReasonDialog(approve ? tr("Approve %1").arg(id) : tr("Reject %1").arg(id), explanation, false,
                                    this);
    connect(dialog, &QDialog::accepted, this, [this, dialog, id, approve] { decide(id, approve, dialog->reason()); });
    dialog->open();
}

void CompensationsView::decide(qint64 id, bool approve, const QString &reason)
{
    const QString path = QStringLiteral("/api/v1/compensations/%1/%2").arg(id).arg(approve ? u"approve" : u"reject");
    m_message->setText(tr("Sending the decision on %1…").arg(id));
    m_client->post(path, QJsonObject{{QStringLiteral("reason"), reason}}, this, [this, id](const ApiResult &result) {
        if (result.error.kind == ApiError::Kind::FourEyes) {
            m_message->setText(tr("Compensation %1 was not decided. Four-eyes rule: you proposed it, so you cannot "
                                  "approve or reject it yourself — another approver must decide it.")
                                   .arg(id));
            m_message->setStyleSheet(QStringLiteral("color: #d62728"));
            return;
        }
        m_message->setStyleSheet(QString());
        if (!result.ok()) {
            m_message->setText(result.error.describe());
            return;
        }
        const QJsonObject answer = result.json.object();
        m_message->setText(tr("Compensation %1 is %2. Effect: %3")
                               .arg(id)
                               .arg(compensationStatusLabel(answer.value(QStringLiteral("status")).toString()),
                                    QString::fromUtf8(QJsonDocument(answer.value(QStringLiteral("result")).toObject())
                                                          .toJson(QJsonDocument::Compact))));
        refresh();
    });
}

} // namespace payonce::console
