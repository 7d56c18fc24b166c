#pragma once

#include "core/ports/notificationverifier.h"

namespace payonce::simulation {

/// Reads the simulated platform's notifications (SimPlatform::notification): a JSON body
/// whose "signature" says whether it verifies. Real signatures have suites of their own
/// (tst_notificationverifier, the fuzzers); the simulation is about what happens after.
class SimVerifier final : public core::NotificationVerifier {
public:
    core::Result<core::PaymentNotification> verify(const core::RawDelivery &delivery, bool checkTimeWindow,
                                                   qint64 nowMs) const override;
};

} // namespace payonce::simulation
