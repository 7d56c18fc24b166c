#pragma once

#include "core/common/channel.h"
#include "core/common/result.h"
#include "shared/layer.h"

#include <QList>
#include <QString>

#include <optional>

namespace payonce::core {

/// One callback_deliveries row as the operator sees it (never the raw body or headers).
struct DeliveryView {
    qint64 id = 0;
    QString channel;
    QString payNo;
    QString orderNo;
    qint64 receivedAtMs = 0;
    bool verified = false;
    QString layer;      ///< the layer that decided it ("none" while undecided)
    int httpStatus = 0; ///< 0: answered SUCCESS / not decided yet
    QString outcome;    ///< the outcome's wire name or the verifier's error
    QString agentId;
};

enum class LogRowStatus {
    Accepted,
    Processed
};

/// One pay_callback_log row (L4).
struct LogRowView {
    QString channel;
    QString payNo;
    QString orderNo;
    qint64 amountFen = 0;
    LogRowStatus status = LogRowStatus::Accepted;
    QString outcome;
    std::optional<qint64> deliveryId;
    qint64 createdAtMs = 0;
    qint64 processedAtMs = 0;
};

/// "accepted" / "processed".
QString logRowStatusName(LogRowStatus status);

/// Read-only access to what the callback path wrote (callback_deliveries, pay_callback_log):
/// the operator's inspector (GET /api/v1/callbacks) and the reads a replay — and its dry
/// run — make before deciding. Never writes. Thread-safe; each call is one short read.
class CallbackHistory {
public:
    virtual ~CallbackHistory() = default;

    /// Deliveries for one pay_no, or (payNo empty) one order_no, oldest first, at most limit.
    virtual Result<QList<DeliveryView>> deliveries(const QString &payNo, const QString &orderNo, int limit) = 0;
    /// pay_callback_log rows for one pay_no (one per channel at most) or one order_no.
    virtual Result<QList<LogRowView>> logRows(const QString &payNo, const QString &orderNo) = 0;
    /// The id of the newest verified delivery (the one with a stored raw body) for
    /// (channel, pay_no); nullopt when there is none.
    virtual Result<std::optional<qint64>> newestVerifiedDelivery(Channel channel, const QString &payNo) = 0;
    /// The status of the log row (channel, pay_no); nullopt when there is none.
    virtual Result<std::optional<LogRowStatus>> logRowStatus(Channel channel, const QString &payNo) = 0;
};

} // namespace payonce::core
