#pragma once

#include "database.h"
#include "sqlcallbacklog.h"

#include "core/ports/callbackmodestore.h"
#include "core/ports/callbackstore.h"

namespace payonce::sql {

/// The callback path's storage (core::CallbackStore) over callback_deliveries,
/// pay_callback_log (through SqlCallbackLog), orders, skus, stock_log, user_coupon,
/// point_log, outbox and findings. Every write to an order is one statement carrying its
/// guard and its fence check; every effect is insert-if-absent on its unique key and
/// answers by the affected rows (never a SELECT first). Thread-safe.
class SqlCallbackStore final : public core::CallbackStore {
public:
    explicit SqlCallbackStore(Database &database) : m_database(database), m_log(database) {}

    core::Result<std::optional<core::CallbackOrder>> findOrderForPayment(const QString &paymentNo) override;
    core::Result<qint64> appendDelivery(const core::DeliveryRecord &delivery) override;
    core::Result<QList<qint64>> appendDeliveries(const QList<core::DeliveryRecord> &deliveries) override;
    core::Result<void> decideDelivery(qint64 id, Layer layer, int httpStatus, const QString &outcome) override;
    core::Result<std::optional<core::RawDelivery>> rawDelivery(qint64 id) override;
    core::Result<core::LogInsert> insertAccepted(const core::AcceptedCallback &row) override;
    core::Result<bool> attachDelivery(core::Channel channel, const QString &payNo, qint64 deliveryId) override;
    core::Result<QList<core::AcceptedCallback>> listAccepted(qint64 createdBeforeMs, int limit) override;
    core::Result<bool> raiseFinding(const core::CallbackFinding &finding) override;
    core::Result<void> inTransaction(
        const std::function<core::Result<void>(core::CallbackTransaction &)> &work) override;

private:
    Database &m_database;
    SqlCallbackLog m_log;
};

/// The callbacks mode in `settings` (name "callbacks.mode", value {"mode": "normal" |
/// "accept_only"}, updated_by the actor, reason the operator's reason, version + 1 per
/// set). Thread-safe.
class SqlCallbackModeStore final : public core::CallbackModeStore {
public:
    explicit SqlCallbackModeStore(Database &database) : m_database(database) {}

    core::Result<core::CallbackModeSetting> mode() override;
    core::Result<void> setMode(core::CallbackMode mode, const QString &actor, const QString &reason, qint64 now,
                               const std::function<core::Result<void>()> &inTransaction = {}) override;
    core::Result<qint64> acceptedWaiting() override;

private:
    Database &m_database;
};

} // namespace payonce::sql
