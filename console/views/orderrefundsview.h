#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;

namespace payonce::console {

class AgentClient;
class RefundsModel;
class TablePanel;

/// An order's refunds: the ones so far (GET /api/v1/refunds?order_no=, with what they add
/// up to) and a refund proposal — an amount, the items returned with it, or both; empty
/// amount: what is left of the payment — which another person approves in Compensations.
/// The agent's refusal (over what is left, a SKU not bought, an order not PAID, …) is
/// shown in words. Object names: "refundOrder", "refundSearch", "refundSummary",
/// "refundAmount", "refundItems", "proposeRefund", "refundResult".
class OrderRefundsView : public QWidget {
    Q_OBJECT
public:
    explicit OrderRefundsView(AgentClient *client, QWidget *parent = nullptr);

    RefundsModel *refunds() const { return m_refunds; }

public Q_SLOTS:
    void search();
    void proposeRefund();

private:
    void sendProposal(const QString &reason);

    AgentClient *m_client;
    RefundsModel *m_refunds;
    TablePanel *m_panel;
    QLineEdit *m_order;
    QLabel *m_summary;
    QLineEdit *m_amount;
    QLineEdit *m_items;
    QLabel *m_result;
};

} // namespace payonce::console
