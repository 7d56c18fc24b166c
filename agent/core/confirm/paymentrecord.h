#pragma once

#include "core/common/channel.h"

#include <QString>

#include <optional>

namespace payonce::core {

/// A payment record's life: creating (written before the gateway call) -> pending
/// (the platform gave a code_url) -> paid | closed; creating -> failed (the gateway call
/// failed; the next confirm for the same channel reuses the record, attempt + 1);
/// creating | pending -> failed under a new payment_no (the patrol closed the trade of an
/// order stuck in PAYING: a platform never creates a closed out_trade_no again).
enum class PaymentRecordStatus {
    Creating,
    Pending,
    Paid,
    Failed,
    Closed
};

/// A fresh out_trade_no: "PN" and 24 hex digits (96 random bits), within the platforms'
/// 6–32 of [A-Za-z0-9_-].
QString newPaymentNo();

/// "creating", "pending", "paid", "failed", "closed".
QString paymentRecordStatusName(PaymentRecordStatus status);
std::optional<PaymentRecordStatus> paymentRecordStatusFromName(QStringView name);

/// One row of payment_records: one live record per (order_no, channel) — L4 of confirms.
/// paymentNo is the out_trade_no sent to the platform.
struct PaymentRecord {
    QString paymentNo;
    QString orderNo;
    Channel channel = Channel::WeChat;
    PaymentRecordStatus status = PaymentRecordStatus::Creating;
    int attempt = 1;
    qint64 amountFen = 0;
    QString codeUrl;
    QString lastError;
};

} // namespace payonce::core
