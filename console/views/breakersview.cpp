#include "breakersview.h"

#include "reasondialog.h"
#include "tablepanel.h"

#include "console/models/breakersmodel.h"
#include "console/net/agentclient.h"

#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace payonce::console {

BreakersView::BreakersView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_breakers(new BreakersModel(this)), m_result(new QLabel(this))
{
    setObjectName(QStringLiteral("breakersView"));
    m_breakers->setObjectName(QStringLiteral("breakersModel"));
    m_panel = new TablePanel(QStringLiteral("breakers"), m_breakers, this);
    m_result->setObjectName(QStringLiteral("breakerResult"));
    m_result->setWordWrap(true);

    auto *actions = new QHBoxLayout;
    const QList<std::tuple<QString, QString, QString>> buttons{
        {QStringLiteral("forceOpenButton"), tr("Force open…"), QStringLiteral("forced_open")},
        {QStringLiteral("forceClosedButton"), tr("Force closed…"), QStringLiteral("forced_closed")},
        {QStringLiteral("autoButton"), tr("Auto…"), QStringLiteral("auto")},
    };
    for (const auto &[name, text, mode] : buttons) {
        auto *button = new QPushButton(text, this);
        button->setObjectName(name);
        connect(button, &QPushButton::clicked, this, [this, breakerMode = mode] { askMode(breakerMode); });
        actions->addWidget(button);
    }
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setObjectName(QStringLiteral("refreshBreakers"));
    connect(refreshButton, &QPushButton::clicked, this, &BreakersView::refresh);
    actions->addWidget(refreshButton);
    actions->addWidget(m_result, 1);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_panel, 1);
    layout->addLayout(actions);
}

void BreakersView::refresh()
{
    m_client->get(QStringLiteral("/api/v1/breakers"), this, [this](const ApiResult &result) {
        if (!result.ok())
            return;
        // A fresh list resets the model: the operator's selection survives it.
        const QString selected =
            m_breakers->rowObject(m_panel->currentSourceRow()).value(QStringLiteral("name")).toString();
        m_breakers->setRows(result.json.array());
        if (!selected.isEmpty())
            m_panel->selectSourceRow(m_breakers->rowOf(selected));
    });
}

void BreakersView::applyMessage(const StreamMessage &message)
{
    if (const auto *event = std::get_if<StreamEvent>(&message.body)) {
        if (event->kind == u"breaker.mode") {
            m_result->setText(tr("%1 set %2 to %3: %4").arg(event->actor, event->subject, event->value, event->reason));
            refresh();
        }
    } else if (const auto *metrics = std::get_if<StreamMetrics>(&message.body)) {
        m_breakers->applyStates(metrics->breakerStates);
    } else if (std::holds_alternative<StreamSnapshot>(message.body)) {
        // A (re)connection: whatever changed while the stream was down.
        refresh();
    }
}

void BreakersView::askMode(const QString &mode)
{
    const int row = m_panel->currentSourceRow();
    const QString name = m_breakers->rowObject(row).value(QStringLiteral("name")).toString();
    if (name.isEmpty()) {
        m_result->setText(tr("Select a breaker first."));
        return;
    }
    const bool forcing = mode != u"auto";
    const QString explanation =
        forcing ? tr("%1 becomes %2 on every agent until the expiry, then returns to auto.").arg(name, mode)
                : tr("%1 returns to automatic operation on every agent.").arg(name);
    auto *dialog = new ReasonDialog(tr("%1: %2").arg(name, mode), explanation, forcing, this);
    connect(dialog, &QDialog::accepted, this,
            [this, dialog, name, mode] { setMode(name, mode, dialog->reason(), dialog->expirySeconds()); });
    dialog->open();
}

void BreakersView::setMode(const QString &name, const QString &mode, const QString &reason, int expirySeconds)
{
    QJsonObject body{{QStringLiteral("mode"), mode}, {QStringLiteral("reason"), reason}};
    if (expirySeconds > 0)
        body.insert(QStringLiteral("expires_in"), expirySeconds);
    m_result->setText(tr("Setting %1 to %2…").arg(name, mode));
    m_client->post(QStringLiteral("/api/v1/breakers/") + name, body, this, [this, name, mode](const ApiResult &result) {
        if (!result.ok()) {
            m_result->setText(result.error.describe());
            return;
        }
        const QJsonObject answer = result.json.object();
        m_result->setText(tr("%1 is now %2 (%3).")
                              .arg(name, answer.value(QStringLiteral("mode")).toString(),
                                   answer.value(QStringLiteral("state")).toString()));
        refresh();
    });
}

} // namespace payonce::console
