#pragma once

#include "core/common/result.h"
#include "crypto/rsakeys.h"

#include <QByteArray>
#include <QString>

namespace payonce::bench {

/// The WeChat Pay side of a payment notification, as the platform builds it: a
/// TRANSACTION.SUCCESS transaction sealed with the merchant's APIv3 key, the envelope
/// signed with a platform key the agent trusts (its serial in wechat.platform_keys).
/// Thread-safe (signing is RSA, about a millisecond: done before a timed phase).
class WeChatNotifier {
public:
    struct Merchant {
        QString mchId;
        QString appId;
        QByteArray apiv3Key;
    };
    WeChatNotifier(crypto::PrivateKey platformKey, QByteArray serial, Merchant merchant);

    /// The complete HTTP request (POST /api/v1/callbacks/wechat, keep-alive) notifying
    /// that the platform's trade `payNo` paid our payment `paymentNo` with `totalFen`,
    /// signed now (the agent accepts it for ±300 s).
    core::Result<QByteArray> paidRequest(const QString &paymentNo, const QString &payNo, qint64 totalFen) const;

private:
    crypto::PrivateKey m_platformKey;
    QByteArray m_serial;
    Merchant m_merchant;
};

} // namespace payonce::bench
