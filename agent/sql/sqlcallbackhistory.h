#pragma once

#include "database.h"

#include "core/ports/callbackhistory.h"

namespace payonce::sql {

/// core::CallbackHistory over callback_deliveries and pay_callback_log: plain SELECTs,
/// never a write. Thread-safe.
class SqlCallbackHistory final : public core::CallbackHistory {
public:
    explicit SqlCallbackHistory(Database &database) : m_database(database) {}

    core::Result<QList<core::DeliveryView>> deliveries(const QString &payNo, const QString &orderNo,
                                                       int limit) override;
    core::Result<QList<core::LogRowView>> logRows(const QString &payNo, const QString &orderNo) override;
    core::Result<std::optional<qint64>> newestVerifiedDelivery(core::Channel channel, const QString &payNo) override;
    core::Result<std::optional<core::LogRowStatus>> logRowStatus(core::Channel channel, const QString &payNo) override;

private:
    Database &m_database;
};

} // namespace payonce::sql
