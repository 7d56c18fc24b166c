#pragma once

#include "simplatform.h"

#include "core/common/result.h"
#include "sql/database.h"

#include <QHash>
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

#include <optional>

namespace payonce::simulation {

/// A broken invariant: its name (what `--mutant` runs expect) and what was seen.
struct Violation {
    QString invariant;
    QString message;
};

/// The money invariants, read from the database by SQL after every step (docs/testing.md,
/// "Lifecycle simulation"). Each check names its invariant:
///
/// - stock-ledger: per SKU, initial − current = Σ stock_log over every entry;
/// - stock-per-order: no order gives back more of a SKU than it took, nor takes more than
///   its items (give-backs written under another order_no are attributed to the order
///   whose compensation or refund wrote them);
/// - effects-owed: PAID/REFUNDING orders have their stock (or an oversold finding) less the
///   items their succeeded partial refunds gave back, exactly one active coupon of their
///   template and nothing else active (partial refunds keep it), net points equal to
///   reward_points − floor(reward_points × partly refunded / paid) (docs/design.md,
///   "Partial refunds"), one order.paid event and the processed log row of their pay_no;
///   PENDING/PAYING/CLOSED/REFUNDED ones none of the effects (REFUNDED keeps its event);
/// - order-transition: every status change is an edge of the state machine, CLOSED and
///   REFUNDED are final, the pay_no of a paid order never changes;
/// - double-payment: every processed payment that did not pay its order has a
///   double_payment finding or a refund;
/// - refund-total: the refunds of one payment that have not failed sum to at most its amount;
/// - refund-books: a refund the platform paid out is not failed in our books, one we call
///   succeeded was paid out, a REFUNDED order has its succeeded refund and got its whole
///   payment back (one refund or several);
/// - partial-refund: a partial refund of an order's own payment exists only for an order
///   that was paid (PAID, REFUNDING, REFUNDED);
/// - four-eyes: nobody decided a compensation they proposed;
/// - audit: every compensation has exactly one audit row per step it went through.
///
/// Reads only; state kept between calls is what the ledger's append-only tables allow to
/// read incrementally, and each order's last status (for order-transition).
class LedgerInvariants {
public:
    LedgerInvariants(QMap<QString, qint64> initialStock, const SimPlatform &platform)
        : m_initialStock(std::move(initialStock)), m_platform(platform)
    {
    }

    /// The checks over `orders` (every order when empty) and the global stock ledger.
    std::optional<Violation> check(sql::Database &database, const QStringList &orders);

    /// Quiescence: no `accepted` callback row is left without an open stuck_accepted finding.
    std::optional<Violation> checkNothingAccepted(sql::Database &database);
    /// After the final patrol run: it found nothing the invariants did not explain (no
    /// effect_mismatch or missing_outbox finding is open).
    std::optional<Violation> checkPatrolQuiet(sql::Database &database);

    /// The last status read for an order (for the driver's choices); empty when unknown.
    QString statusOf(const QString &orderNo) const { return m_lastStatus.value(orderNo); }
    QStringList ordersIn(const QString &status) const;

private:
    core::Result<void> readLedger(sql::Session &session);
    QString ownerOf(const QString &ledgerOrderNo) const;

    QMap<QString, qint64> m_initialStock;
    const SimPlatform &m_platform;
    qint64 m_ledgerSeenId = 0;
    QHash<QString, QMap<QString, qint64>> m_netByOrder;   // order → sku → net taken
    QHash<QString, QMap<QString, qint64>> m_takenByOrder; // order → sku → Σ positive entries
    QMap<QString, qint64> m_ledgerBySku;
    QHash<QString, QString> m_compensationOrder;   // "reversal:<id>" → order
    QHash<QString, QString> m_refundOrder;         // "refund:<refund_no>" → order
    QHash<QString, QMap<QString, qint64>> m_items; // order → sku → qty
    QHash<QString, QString> m_lastStatus;
    QHash<QString, QString> m_lastPayNo;
};

} // namespace payonce::simulation
