#pragma once

#include "core/ports/notificationverifier.h"

#include <QSet>
#include <QString>

#include <mutex>

namespace payonce::testsupport {

/// Decodes a notification's JSON body {"pay_no", "out_trade_no", "amount", and optionally
/// "currency", "mchid", "state"} as a verified notification — CNY, merchant `mchId` and
/// SUCCESS where the body leaves them out; a delivery with the header X-Forged is a bad
/// signature, one with X-Outside-Window is outside the time window (BadSignature when the
/// window is checked). The real signatures are tst_notificationverifier's: this is for
/// suites about what happens after verification.
///
/// With `remembersCopies`, like the real verifier's memory: a body verified once is known
/// to verifyFromMemory() (by its body alone), which still checks the window header.
class JsonVerifier final : public core::NotificationVerifier {
public:
    explicit JsonVerifier(QString mchId, bool remembersCopies = false)
        : m_mchId(std::move(mchId)), m_remembersCopies(remembersCopies)
    {
    }
    core::Result<core::PaymentNotification> verify(const core::RawDelivery &delivery, bool checkTimeWindow,
                                                   qint64) const override;
    std::optional<core::Result<core::PaymentNotification>> verifyFromMemory(const core::RawDelivery &delivery,
                                                                            bool checkTimeWindow,
                                                                            qint64) const override;

private:
    core::Result<core::PaymentNotification> decode(const core::RawDelivery &delivery, bool checkTimeWindow) const;

    QString m_mchId;
    bool m_remembersCopies = false;
    mutable std::mutex m_mutex;
    mutable QSet<QByteArray> m_verifiedBodies;
};

/// A WeChat success notification for (payNo, paymentNo, amountFen) that JsonVerifier accepts.
core::RawDelivery jsonDelivery(const QString &payNo, const QString &paymentNo, qint64 amountFen);

} // namespace payonce::testsupport
