#pragma once

#include "core/common/channel.h"

#include <QString>

#include <optional>

namespace payonce::core {

/// A platform's refund notification whose signature verified, whose resource decrypted
/// (WeChat) and whose fields are well-formed — the refund counterpart of
/// PaymentNotification. Whether it matches a refund we asked for (refundNo, amount,
/// merchant) is the refund path's to decide, not the verifier's.
struct RefundNotification {
    enum class State {
        Success, ///< the money went back (WeChat REFUND.SUCCESS; every Alipay refund notify)
        Closed,  ///< WeChat REFUND.CLOSED: closed without refunding
        Abnormal, ///< WeChat REFUND.ABNORMAL: stuck (the payer's card frozen, …), awaiting manual handling; may still pay out
    };
    Channel channel = Channel::WeChat;
    State state = State::Success;
    QString refundNo;  ///< ours: WeChat out_refund_no / Alipay out_biz_no (the out_request_no)
    QString refundId;  ///< WeChat refund_id; Alipay has none: empty
    QString paymentNo; ///< out_trade_no
    QString payNo;     ///< transaction_id / trade_no
    /// This refund's amount in fen: WeChat amount.refund. Alipay's notify does not say it
    /// (nullopt): it says refundedTotalFen.
    std::optional<qint64> amountFen;
    /// Alipay refund_fee: everything refunded of the trade so far, this refund included.
    /// WeChat does not say it (nullopt).
    std::optional<qint64> refundedTotalFen;
    qint64 totalFen = 0;  ///< the trade's amount: amount.total / total_amount
    QString refundStatus; ///< as the platform wrote it: refund_status / trade_status
    QString merchantId;   ///< WeChat mchid / Alipay seller_id
    QString appId;        ///< Alipay app_id; WeChat's refund resource carries no appid: empty
    QString eventId;      ///< WeChat notification id / Alipay notify_id
};

} // namespace payonce::core
