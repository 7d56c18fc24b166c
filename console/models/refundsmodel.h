#pragma once

#include "jsontablemodel.h"

#include <QJsonArray>
#include <QJsonObject>

#include <optional>

namespace payonce::console {

/// GET /api/v1/refunds?order_no=: the refunds of one order so far, newest first — whole
/// or partial, their amount, the items they give back and where they stand.
class RefundsModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit RefundsModel(QObject *parent = nullptr);

    /// What the rows add up to, in fen: succeeded (given back), open (requested or
    /// processing: may still go back), failed (nothing went back).
    struct Totals {
        qint64 succeededFen = 0;
        qint64 openFen = 0;
        qint64 failedFen = 0;
    };
    Totals totals() const;
    /// "2 refunds: 20.00 given back, 10.00 in flight" (or "no refund yet").
    QString summary() const;

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

/// The desk's refund proposal as typed: an amount ("20.00", empty: what is left of the
/// payment) and items ("SKU-1 x2, SKU-2 x1", empty: none). body() is the JSON of POST
/// /api/v1/compensations, or nullopt with the reason in *error when the input is not
/// one — money as a decimal string of minor units, never a double, and items only with
/// an amount (the order's items carry no prices). The agent checks the rest.
struct RefundProposalInput {
    QString orderNo;
    QString amount;
    QString items;
    QString reason;

    std::optional<QJsonObject> body(QString *error) const;
    /// "a refund of 20.00 with SKU-1 x1 of ORD-1" — what the confirmation says.
    QString describe() const;
};

} // namespace payonce::console
