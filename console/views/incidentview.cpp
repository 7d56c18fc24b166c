#include "incidentview.h"

#include "reasondialog.h"

#include "console/models/codelabels.h"
#include "console/models/localformat.h"
#include "console/net/agentclient.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

constexpr int kPollMs = 500;

QLabel *figure(const QString &name, QWidget *parent)
{
    auto *label = new QLabel(QStringLiteral("–"), parent);
    label->setObjectName(name);
    QFont font = label->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 2.0);
    label->setFont(font);
    return label;
}

} // namespace

IncidentView::IncidentView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_mode(figure(QStringLiteral("callbackModeValue"), this)),
      m_waiting(figure(QStringLiteral("acceptedWaitingValue"), this)), m_changedBy(new QLabel(this)),
      m_drain(new QProgressBar(this)), m_on(new QPushButton(tr("Accept-only ON…"), this)),
      m_off(new QPushButton(tr("Accept-only OFF (drain)…"), this)), m_result(new QLabel(this))
{
    setObjectName(QStringLiteral("incidentView"));
    m_changedBy->setObjectName(QStringLiteral("modeChangedBy"));
    m_changedBy->setWordWrap(true);
    m_drain->setObjectName(QStringLiteral("drainProgress"));
    m_drain->setRange(0, 100);
    m_drain->setValue(100);
    m_drain->setFormat(tr("%p % drained"));
    m_on->setObjectName(QStringLiteral("acceptOnlyOnButton"));
    m_off->setObjectName(QStringLiteral("acceptOnlyOffButton"));
    m_result->setObjectName(QStringLiteral("modeResult"));
    m_result->setWordWrap(true);
    connect(m_on, &QPushButton::clicked, this, [this] { askMode(QStringLiteral("accept_only")); });
    connect(m_off, &QPushButton::clicked, this, [this] { askMode(QStringLiteral("normal")); });

    auto *state = new QGroupBox(tr("Callback processing"), this);
    auto *form = new QFormLayout(state);
    form->addRow(tr("Mode"), m_mode);
    form->addRow(tr("Accepted rows waiting"), m_waiting);
    form->addRow(tr("Drain"), m_drain);
    form->addRow(tr("Set by"), m_changedBy);

    auto *explanation = new QLabel(
        tr("Accept-only: every agent verifies, records and acknowledges each gateway callback but processes none — "
           "for an incident downstream (database, points, coupons). Switching it off lets the worker drain the "
           "accepted rows through all five layers."),
        this);
    explanation->setWordWrap(true);
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_on);
    actions->addWidget(m_off);
    actions->addStretch(1);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(explanation);
    layout->addWidget(state);
    layout->addLayout(actions);
    layout->addWidget(m_result);
    layout->addStretch(1);

    m_poll.setInterval(kPollMs);
    connect(&m_poll, &QTimer::timeout, this, &IncidentView::refresh);
}

void IncidentView::refresh()
{
    if (m_client->agentUrl().isEmpty() || m_fetching)
        return;
    m_fetching = true;
    m_client->get(QStringLiteral("/api/v1/mode"), this, [this](const ApiResult &result) {
        m_fetching = false;
        if (result.ok())
            showMode(result.json.object());
    });
}

void IncidentView::showMode(const QJsonObject &mode)
{
    if (!m_progress.apply(mode))
        return;
    m_mode->setText(m_progress.acceptOnly() ? tr("ACCEPT-ONLY") : callbackModeLabel(m_progress.mode()));
    m_mode->setStyleSheet(m_progress.acceptOnly() ? QStringLiteral("color: #d62728") : QString());
    m_waiting->setText(QString::number(m_progress.waiting()));
    m_drain->setValue(m_progress.percentDone());
    m_drain->setFormat(
        m_progress.acceptOnly()
            ? tr("waiting for accept-only to end")
            : tr("%1 of %2 processed (%p %)").arg(m_progress.peak() - m_progress.waiting()).arg(m_progress.peak()));
    m_changedBy->setText(
        m_progress.changedBy().isEmpty()
            ? QString()
            : tr("%1 at %2: %3").arg(m_progress.changedBy(), localTime(m_progress.changedAt()), m_progress.reason()));
    m_on->setEnabled(!m_progress.acceptOnly());
    m_off->setEnabled(m_progress.acceptOnly());
    if (m_progress.wantsPolling())
        m_poll.start();
    else
        m_poll.stop();
}

void IncidentView::applyMessage(const StreamMessage &message)
{
    if (const auto *event = std::get_if<StreamEvent>(&message.body)) {
        if (event->kind == streamevent::CallbackMode) {
            m_result->setText(tr("%1 set callbacks to %2: %3").arg(event->actor, event->value, event->reason));
            refresh();
        }
    } else if (std::holds_alternative<StreamSnapshot>(message.body)) {
        refresh();
    }
}

void IncidentView::askMode(const QString &mode)
{
    const bool on = mode == u"accept_only";
    const QString explanation =
        on ? tr("Every agent keeps acknowledging callbacks but only records them as accepted rows; no order is marked "
                "paid and no points or coupons are granted until accept-only is switched off.")
           : tr("Every agent processes callbacks again, and the %1 accepted rows waiting are drained through all five "
                "layers.")
                 .arg(m_progress.waiting());
    auto *dialog = new ReasonDialog(on ? tr("Accept-only ON") : tr("Accept-only OFF"), explanation, false, this);
    connect(dialog, &QDialog::accepted, this, [this, dialog, mode] { setMode(mode, dialog->reason()); });
    dialog->open();
}

void IncidentView::setMode(const QString &mode, const QString &reason)
{
    m_result->setText(tr("Setting callbacks to %1…").arg(mode));
    m_client->put(QStringLiteral("/api/v1/mode"),
                  QJsonObject{{QStringLiteral("callbacks"), mode}, {QStringLiteral("reason"), reason}}, this,
                  [this, mode](const ApiResult &result) {
                      if (!result.ok()) {
                          m_result->setText(result.error.describe());
                          return;
                      }
                      m_result->setText(tr("Callbacks are now %1.").arg(mode));
                      showMode(result.json.object());
                  });
}

} // namespace payonce::console
