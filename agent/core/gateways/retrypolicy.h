#pragma once

#include "core/common/result.h"

#include <chrono>
#include <functional>

namespace payonce::core {

struct RetryOptions {
    /// Total attempts, the first included (>= 1).
    int maxAttempts = 3;
    std::chrono::milliseconds initialBackoff{100};
    /// Each further wait is the previous one times this.
    int multiplier = 2;
    std::chrono::milliseconds maxBackoff{std::chrono::seconds(2)};
    /// The wait is drawn uniformly from [base * (1 - jitter), base * (1 + jitter)], then
    /// capped at maxBackoff. 0 disables jitter.
    double jitter = 0.2;
};

/// Retries a call with exponential backoff and jitter, only for the errors the
/// PaymentGateway contract calls retryable: Unavailable (outcome unknown, the same
/// request is safe to send again) and BadSignature (treated the same way). Anything else
/// — and success — is returned at once.
///
/// The sleep and the random source are injectable, so tests run without waiting.
/// Thread-safe if the injected functions are (the defaults are).
class RetryPolicy {
public:
    using Sleep = std::function<void(std::chrono::milliseconds)>;
    using Random = std::function<double()>; ///< uniform in [0, 1)

    explicit RetryPolicy(RetryOptions options = {}, Sleep sleep = {}, Random random = {});

    static bool isRetryable(const Error &error);

    /// The wait before attempt `attempt + 1` after attempt `attempt` failed (attempt >= 1),
    /// for a random draw `unit` in [0, 1).
    std::chrono::milliseconds backoffFor(int attempt, double unit) const;

    const RetryOptions &options() const { return m_options; }

    template <typename T>
    Result<T> run(const std::function<Result<T>()> &call) const
    {
        for (int attempt = 1;; ++attempt) {
            Result<T> result = call();
            if (result.ok() || !isRetryable(result.error()) || attempt >= m_options.maxAttempts)
                return result;
            m_sleep(backoffFor(attempt, m_random()));
        }
    }

private:
    RetryOptions m_options;
    Sleep m_sleep;
    Random m_random;
};

} // namespace payonce::core
