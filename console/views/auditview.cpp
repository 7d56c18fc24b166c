#include "auditview.h"

#include "tablepanel.h"

#include "console/models/auditfilterproxy.h"
#include "console/models/auditmodel.h"
#include "console/net/agentclient.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QGridLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QUrlQuery>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

constexpr int kAuditLimit = 1000; // the API's largest page
constexpr int kEventRefreshMs = 1000;

QComboBox *choiceBox(const char *name, const QString &anyText, QWidget *parent)
{
    auto *box = new QComboBox(parent);
    box->setObjectName(QLatin1String(name));
    box->setEditable(true);
    box->setInsertPolicy(QComboBox::NoInsert);
    box->lineEdit()->setPlaceholderText(anyText);
    box->setMinimumContentsLength(16);
    box->addItem(QString()); // the first choice: any
    return box;
}

QDateTimeEdit *timeEdit(const char *name, QWidget *parent)
{
    auto *edit = new QDateTimeEdit(QDateTime::currentDateTimeUtc(), parent);
    edit->setObjectName(QLatin1String(name));
    edit->setTimeSpec(Qt::UTC);
    edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    edit->setCalendarPopup(true);
    edit->setEnabled(false);
    return edit;
}

} // namespace

AuditView::AuditView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_audit(new AuditModel(this)), m_filter(new AuditFilterProxy(this)),
      m_actor(choiceBox("auditActor", tr("any actor"), this)),
      m_action(choiceBox("auditAction", tr("any action"), this)), m_target(new QLineEdit(this)),
      m_sinceEnabled(new QCheckBox(tr("From"), this)), m_since(timeEdit("auditSince", this)),
      m_untilEnabled(new QCheckBox(tr("Until"), this)), m_until(timeEdit("auditUntil", this)),
      m_status(new QLabel(this))
{
    setObjectName(QStringLiteral("auditView"));
    m_audit->setObjectName(QStringLiteral("auditModel"));
    m_filter->setObjectName(QStringLiteral("auditFilterProxy"));
    m_filter->setSourceModel(m_audit);
    m_panel = new TablePanel(QStringLiteral("audit"), m_filter, this);
    m_target->setObjectName(QStringLiteral("auditTarget"));
    m_target->setPlaceholderText(tr("part of a target (order, pay_no, breaker, …)"));
    m_target->setClearButtonEnabled(true);
    m_sinceEnabled->setObjectName(QStringLiteral("auditSinceEnabled"));
    m_untilEnabled->setObjectName(QStringLiteral("auditUntilEnabled"));
    m_status->setObjectName(QStringLiteral("auditStatus"));
    auto *apply = new QPushButton(tr("Fetch"), this);
    apply->setObjectName(QStringLiteral("auditApply"));
    apply->setDefault(true);

    // The API's filters fetch again; the others only re-filter what is shown.
    connect(apply, &QPushButton::clicked, this, &AuditView::refresh);
    connect(m_actor, &QComboBox::activated, this, &AuditView::refresh);
    connect(m_action, &QComboBox::activated, this, &AuditView::refresh);
    connect(m_actor->lineEdit(), &QLineEdit::returnPressed, this, &AuditView::refresh);
    connect(m_action->lineEdit(), &QLineEdit::returnPressed, this, &AuditView::refresh);
    connect(m_sinceEnabled, &QCheckBox::toggled, m_since, &QWidget::setEnabled);
    connect(m_sinceEnabled, &QCheckBox::toggled, this, &AuditView::refresh);
    connect(m_since, &QDateTimeEdit::editingFinished, this, &AuditView::refresh);
    connect(m_untilEnabled, &QCheckBox::toggled, m_until, &QWidget::setEnabled);
    connect(m_untilEnabled, &QCheckBox::toggled, this, &AuditView::applyLocalFilters);
    connect(m_until, &QDateTimeEdit::dateTimeChanged, this, &AuditView::applyLocalFilters);
    connect(m_target, &QLineEdit::textChanged, this, &AuditView::applyLocalFilters);

    auto *filters = new QGridLayout;
    filters->addWidget(new QLabel(tr("Actor"), this), 0, 0);
    filters->addWidget(m_actor, 0, 1);
    filters->addWidget(new QLabel(tr("Action"), this), 0, 2);
    filters->addWidget(m_action, 0, 3);
    filters->addWidget(new QLabel(tr("Target"), this), 0, 4);
    filters->addWidget(m_target, 0, 5);
    filters->addWidget(m_sinceEnabled, 1, 0);
    filters->addWidget(m_since, 1, 1);
    filters->addWidget(m_untilEnabled, 1, 2);
    filters->addWidget(m_until, 1, 3);
    filters->addWidget(apply, 1, 5, Qt::AlignRight);
    filters->setColumnStretch(5, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(filters);
    layout->addWidget(m_panel, 1);
    layout->addWidget(m_status);

    m_eventRefresh.setSingleShot(true);
    m_eventRefresh.setInterval(kEventRefreshMs);
    connect(&m_eventRefresh, &QTimer::timeout, this, &AuditView::refresh);
}

AuditView::~AuditView() = default;

QString AuditView::query() const
{
    QUrlQuery query;
    if (const QString actor = m_actor->currentText().trimmed(); !actor.isEmpty())
        query.addQueryItem(QStringLiteral("actor"), actor);
    if (const QString action = m_action->currentText().trimmed(); !action.isEmpty())
        query.addQueryItem(QStringLiteral("action"), action);
    if (m_sinceEnabled->isChecked())
        query.addQueryItem(QStringLiteral("since"), m_since->dateTime().toUTC().toString(Qt::ISODateWithMs));
    query.addQueryItem(QStringLiteral("limit"), QString::number(kAuditLimit));
    // '+' in a time zone or a name must reach the agent as itself, not as a space.
    return QStringLiteral("/api/v1/audit?") + query.toString(QUrl::FullyEncoded).replace(u'+', QStringLiteral("%2B"));
}

void AuditView::refresh()
{
    if (m_client->agentUrl().isEmpty())
        return;
    m_client->get(query(), this, [this](const ApiResult &result) {
        if (!result.ok()) {
            m_status->setText(result.error.describe());
            return;
        }
        m_audit->setRows(result.json.array());
        offerChoices();
        m_status->setText(tr("%1 of %2 lines shown").arg(m_panel->proxy()->rowCount()).arg(m_audit->rowCount()));
    });
}

void AuditView::applyLocalFilters()
{
    m_filter->setTargetContains(m_target->text().trimmed());
    m_filter->setUntil(m_untilEnabled->isChecked() ? m_until->dateTime().toUTC() : QDateTime());
    m_status->setText(tr("%1 of %2 lines shown").arg(m_panel->proxy()->rowCount()).arg(m_audit->rowCount()));
}

void AuditView::offerChoices()
{
    // Every actor and action seen so far stays offered, also once a filter narrowed the
    // list; what the operator typed stays as typed.
    for (auto [box, key] :
         {std::pair{m_actor, QStringLiteral("actor")}, std::pair{m_action, QStringLiteral("action")}}) {
        const QString typed = box->currentText();
        for (const QString &value : m_audit->distinctValues(key)) {
            if (box->findText(value) < 0)
                box->addItem(value);
        }
        if (box->currentText() != typed)
            box->setEditText(typed);
    }
}

void AuditView::applyMessage(const StreamMessage &message)
{
    // Someone acted (or the stream came back): the trail has new lines.
    if (std::holds_alternative<StreamEvent>(message.body) || std::holds_alternative<StreamSnapshot>(message.body)) {
        if (!m_eventRefresh.isActive())
            m_eventRefresh.start();
    }
}

} // namespace payonce::console
