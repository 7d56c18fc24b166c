#pragma once

#include "core/common/channel.h"
#include "core/ports/refundstore.h"
#include "core/settlement/refundnotification.h"

#include <functional>

namespace payonce::core {

class Clock;
class PaymentGateway;
struct GatewayRefund;

struct RefundServiceOptions {
    QString notifyUrlWeChat; ///< where the platform sends the refund's notification
    QString notifyUrlAlipay;
};

/// Gives money back exactly once. A refund row is made when a refund
/// compensation is approved (in that transaction, under the compensation's own refund
/// number); this service then talks to the platform and settles the row:
///
/// - submit(): sends a `requested` refund to its platform — again and again if need be:
///   the refund number makes the platform answer the first refund rather than make a
///   second. Processing → the row waits for the notification (or the follow-up's query);
///   Success → settled at once; Closed or a refusal (Conflict, NotFound, InvalidInput) →
///   failed; Abnormal (WeChat: awaiting manual handling, the money may still go back) →
///   processing with a refund_abnormal finding, until SUCCESS or CLOSED; an unknown
///   outcome (Unavailable, BadSignature) → the row stays `requested` with the error, for
///   the follow-up.
/// - settle(): a verified refund notification. It must name a refund of ours, on the same
///   channel and trade, for the same amount (WeChat says it; Alipay says the trade's total
///   refunded so far, which must cover ours); then the store's status CAS decides, so 20
///   copies of one notification settle it once.
/// - followUp(): what the notification did not finish: `requested` ones submitted again,
///   `processing` ones asked with queryRefund.
/// Thread-safe; every call blocks the calling (worker) thread.
class RefundService {
public:
    using GatewayLookup = std::function<PaymentGateway *(Channel)>;

    RefundService(RefundStore &store, GatewayLookup gateways, const Clock &clock, RefundServiceOptions options = {});

    Result<RefundRecord> submit(const QString &refundNo);
    Result<RefundSettlement> settle(const RefundNotification &notification);
    struct FollowUpReport {
        int submitted = 0;
        int settled = 0;
        int waiting = 0;
        int failed = 0; ///< could not be asked (no gateway, query failed)
    };
    Result<FollowUpReport> followUp(qint64 updatedBeforeMs, int limit = 100);

private:
    Result<void> recordRefusal(const RefundRecord &refund, const Error &error, qint64 now);
    Result<void> recordMade(const RefundRecord &refund, const GatewayRefund &made, qint64 now);
    Result<RefundSettlement> applyFailure(const RefundRecord &refund, const QString &why);

    RefundStore &m_store;
    GatewayLookup m_gateways;
    const Clock &m_clock;
    RefundServiceOptions m_options;
};

} // namespace payonce::core
