#pragma once

#include "core/ports/notificationverifier.h"

#include <QString>

namespace payonce::testsupport {

/// Decodes a notification's JSON body {"pay_no", "out_trade_no", "amount", and optionally
/// "currency", "mchid", "state"} as a verified notification — CNY, merchant `mchId` and
/// SUCCESS where the body leaves them out; a delivery with the header X-Forged is a bad
/// signature. The real signatures are tst_notificationverifier's: this is for suites about
/// what happens after verification.
class JsonVerifier final : public core::NotificationVerifier {
public:
    explicit JsonVerifier(QString mchId) : m_mchId(std::move(mchId)) {}
    core::Result<core::PaymentNotification> verify(const core::RawDelivery &delivery, bool, qint64) const override;

private:
    QString m_mchId;
};

/// A WeChat success notification for (payNo, paymentNo, amountFen) that JsonVerifier accepts.
core::RawDelivery jsonDelivery(const QString &payNo, const QString &paymentNo, qint64 amountFen);

} // namespace payonce::testsupport
