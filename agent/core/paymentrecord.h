#pragma once

#include "core/channel.h"

#include <QString>

#include <optional>

namespace payonce::core {

/// A payment record's life: creating (written before the gateway call) -> pending
/// (the platform gave a code_url) -> paid | closed; creating -> failed (the gateway call
/// failed; the next confirm for the same channel reuses the record, attempt + 1).
enum class PaymentRecordStatus { Creating, Pending, Paid, Failed, Closed };

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
