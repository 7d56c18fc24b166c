#include "orderrefundsview.h"

#include "reasondialog.h"
#include "tablepanel.h"

#include "console/models/refundsmodel.h"
#include "console/net/agentclient.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUrlQuery>
#include <QVBoxLayout>

namespace payonce::console {

OrderRefundsView::OrderRefundsView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_refunds(new RefundsModel(this)), m_order(new QLineEdit(this)),
      m_summary(new QLabel(this)), m_amount(new QLineEdit(this)), m_items(new QLineEdit(this)),
      m_result(new QLabel(this))
{
    setObjectName(QStringLiteral("orderRefundsView"));
    m_refunds->setObjectName(QStringLiteral("refundsModel"));
    m_panel = new TablePanel(QStringLiteral("refunds"), m_refunds, this);
    m_order->setObjectName(QStringLiteral("refundOrder"));
    m_order->setPlaceholderText(tr("order_no"));
    auto *searchButton = new QPushButton(tr("Show refunds"), this);
    searchButton->setObjectName(QStringLiteral("refundSearch"));
    m_summary->setObjectName(QStringLiteral("refundSummary"));
    m_summary->setWordWrap(true);
    m_amount->setObjectName(QStringLiteral("refundAmount"));
    m_amount->setPlaceholderText(tr("20.00 — empty: what is left of the payment"));
    m_items->setObjectName(QStringLiteral("refundItems"));
    m_items->setPlaceholderText(tr("SKU-1 x1, SKU-2 x2 — empty: no items go back"));
    auto *propose = new QPushButton(tr("Propose refund…"), this);
    propose->setObjectName(QStringLiteral("proposeRefund"));
    propose->setToolTip(tr("A refund compensation: another person approves it before any money moves"));
    m_result->setObjectName(QStringLiteral("refundResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);

    connect(m_order, &QLineEdit::returnPressed, this, &OrderRefundsView::search);
    connect(searchButton, &QPushButton::clicked, this, &OrderRefundsView::search);
    connect(propose, &QPushButton::clicked, this, &OrderRefundsView::proposeRefund);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_order, 1);
    bar->addWidget(searchButton);
    auto *form = new QFormLayout;
    form->addRow(tr("Amount"), m_amount);
    form->addRow(tr("Items returned"), m_items);
    auto *actions = new QHBoxLayout;
    actions->addWidget(propose);
    actions->addWidget(m_result, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(m_panel, 1);
    layout->addLayout(form);
    layout->addLayout(actions);
}

void OrderRefundsView::search()
{
    const QString orderNo = m_order->text().trimmed();
    if (orderNo.isEmpty()) {
        m_summary->setText(tr("Type an order_no."));
        return;
    }
    QUrlQuery query;
    query.addQueryItem(QStringLiteral("order_no"), orderNo);
    m_summary->setText(tr("Loading…"));
    m_client->get(QStringLiteral("/api/v1/refunds?") + query.toString(QUrl::FullyEncoded), this,
                  [this](const ApiResult &result) {
                      if (!result.ok()) {
                          m_refunds->setRows(QList<QJsonObject>{});
                          m_summary->setText(result.error.describe());
                          return;
                      }
                      m_refunds->setRows(result.json.array());
                      m_summary->setText(m_refunds->summary());
                  });
}

void OrderRefundsView::proposeRefund()
{
    // The reason is asked for after the input is known to make a proposal.
    RefundProposalInput input{m_order->text(), m_amount->text(), m_items->text(), QStringLiteral("-")};
    QString error;
    if (!input.body(&error)) {
        m_result->setText(error);
        return;
    }
    auto *dialog = new ReasonDialog(tr("Propose a refund"),
                                    tr("Propose %1. Another person approves it in Compensations before the "
                                       "platform is asked.")
                                        .arg(input.describe()),
                                    false, this);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { sendProposal(dialog->reason()); });
    dialog->open();
}

void OrderRefundsView::sendProposal(const QString &reason)
{
    const RefundProposalInput input{m_order->text(), m_amount->text(), m_items->text(), reason};
    QString error;
    const auto body = input.body(&error);
    if (!body) {
        m_result->setText(error);
        return;
    }
    m_result->setText(tr("Proposing %1…").arg(input.describe()));
    m_client->post(QStringLiteral("/api/v1/compensations"), *body, this, [this, input](const ApiResult &result) {
        if (!result.ok()) {
            m_result->setText(tr("Refused: %1").arg(result.error.describe()));
            return;
        }
        m_result->setText(tr("Proposed %1 as compensation %2: waiting for a second person's approval.")
                              .arg(input.describe())
                              .arg(result.json.object().value(QStringLiteral("id")).toInteger()));
        m_amount->clear();
        m_items->clear();
        search();
    });
}

} // namespace payonce::console
