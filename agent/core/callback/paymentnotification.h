#pragma once

#include "core/common/channel.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace payonce::core {

/// A platform's payment notification exactly as it arrived: what is needed to verify it
/// again later (replay, the accepted-row worker) and what callback_deliveries records.
struct RawDelivery {
    Channel channel = Channel::WeChat;
    /// Wechatpay-Signature / -Timestamp / -Nonce / -Serial for WeChat; Content-Type for Alipay.
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body; ///< the raw bytes the signature covers
    qint64 receivedAtMs = 0;
    /// The W3C trace id of the request that brought it (callback_deliveries.trace_id);
    /// what it causes — the order.paid outbox event — carries it on. May be empty.
    QString traceId;
    QByteArray header(const QByteArray &name) const
    {
        for (const auto &[key, value] : headers) {
            if (key.compare(name, Qt::CaseInsensitive) == 0)
                return value;
        }
        return {};
    }
};

/// A notification whose signature verified, whose resource decrypted (WeChat), and whose
/// fields are well-formed. Whether it matches an order (amount, merchant) is the
/// pipeline's to decide, not the verifier's.
struct PaymentNotification {
    Channel channel = Channel::WeChat;
    QString payNo;        ///< transaction_id / trade_no: 1–64 of [A-Za-z0-9_-]
    QString paymentNo;    ///< out_trade_no: our payment record (see PaymentGateway)
    qint64 amountFen = 0; ///< amount.total / total_amount in fen
    QString currency;     ///< "CNY"
    QString merchantId;   ///< WeChat mchid / Alipay seller_id
    QString appId;        ///< WeChat appid / Alipay app_id
    bool paid = false;    ///< trade_state SUCCESS / trade_status TRADE_SUCCESS|TRADE_FINISHED
    QString tradeState;   ///< as the platform wrote it, for the record
    QString eventId;      ///< WeChat notification id / Alipay notify_id
};

} // namespace payonce::core
