#pragma once

#include "database.h"
#include "groupedwrites.h"

namespace payonce::sql {

/// A row of pay_callback_log: the durable "we have this payment notification" (L4).
struct CallbackLogEntry {
    QString channel; ///< "wechat" | "alipay"
    QString payNo;
    QString orderNo;
    qint64 amountFen = 0;
    std::optional<qint64> deliveryId;
    QString paymentNo; ///< the out_trade_no it pays; empty: not known (NULL)
};

enum class InsertOutcome {
    Inserted,
    Duplicate
};

/// pay_callback_log, keyed by (channel, pay_no). The unique index decides duplicates:
/// there is never a SELECT before the INSERT.
class SqlCallbackLog {
public:
    explicit SqlCallbackLog(Database &database) : m_database(database) {}

    /// Inserts the row as `accepted` in its own short transaction. Duplicate is recognised
    /// from the driver's native unique-violation code (2067 / 23505 / 1062). Idempotent:
    /// calling it again for the same key answers Duplicate and writes nothing.
    core::Result<InsertOutcome> insertAccepted(const CallbackLogEntry &entry);

    /// The same inside the caller's open transaction, as insert-if-absent: no error is
    /// raised for a duplicate (PostgreSQL would abort the transaction), the affected-row
    /// count answers.
    core::Result<InsertOutcome> insertAcceptedIfAbsent(Session &session, const CallbackLogEntry &entry);

    /// The row inserted `processed` with `outcome` in the caller's open transaction, as
    /// insert-if-absent (the one-commit path: the paid transaction writes it with its effects).
    core::Result<InsertOutcome> insertProcessedIfAbsent(Session &session, const CallbackLogEntry &entry,
                                                        const QString &outcome);
    /// PostgreSQL: the same row as a part of a WITH statement whose earlier part `delivery`
    /// inserted the delivery (one row, its `id`): the row's delivery_id is that id
    /// (entry.deliveryId is not read). Insert-if-absent; RETURNING is the caller's.
    static GroupedWrite processedRowAfterDelivery(const Session &session, const QString &delivery,
                                                  const CallbackLogEntry &entry, const QString &outcome);

    /// A row still `accepted` with no delivery (written from the platform's query) takes
    /// `deliveryId` as its delivery, as a CAS on both. True when this call attached it:
    /// the caller now owns finishing the row, as if it had inserted it.
    core::Result<bool> attachDelivery(const QString &channel, const QString &payNo, qint64 deliveryId);

    /// accepted -> processed, as a CAS on the status. True when this call made the change.
    core::Result<bool> markProcessed(Session &session, const QString &channel, const QString &payNo,
                                     const QString &outcome);
    /// The same, and a row without a delivery takes deliveryId as its delivery.
    core::Result<bool> markProcessedWithDelivery(Session &session, const QString &channel, const QString &payNo,
                                                 const QString &outcome, qint64 deliveryId);

private:
    Database &m_database;
};

} // namespace payonce::sql
