#pragma once

#include "core/ports/notificationverifier.h"

#include <QSet>

#include <mutex>

namespace payonce::simulation {

/// Reads the simulated platform's notifications (SimPlatform::notification): a JSON body
/// whose "signature" says whether it verifies. Real signatures have suites of their own
/// (tst_notificationverifier, the fuzzers); the simulation is about what happens after.
/// Like the real verifier it remembers the bodies it verified, for verifyFromMemory() (the
/// HTTP event loop's look); the simulated platform signs no time, so there is no window.
class SimVerifier final : public core::NotificationVerifier {
public:
    core::Result<core::PaymentNotification> verify(const core::RawDelivery &delivery, bool checkTimeWindow,
                                                   qint64 nowMs) const override;
    std::optional<core::Result<core::PaymentNotification>> verifyFromMemory(const core::RawDelivery &delivery,
                                                                            bool checkTimeWindow,
                                                                            qint64 nowMs) const override;

private:
    core::Result<core::PaymentNotification> decode(const core::RawDelivery &delivery) const;

    mutable std::mutex m_mutex;
    mutable QSet<QByteArray> m_verified;
};

} // namespace payonce::simulation
