#include "core/gateways/retrypolicy.h"

#include <QRandomGenerator>

#include <algorithm>
#include <thread>

namespace payonce::core {

RetryPolicy::RetryPolicy(RetryOptions options, Sleep sleep, Random random)
    : m_options(options), m_sleep(std::move(sleep)), m_random(std::move(random))
{
    m_options.maxAttempts = std::max(1, m_options.maxAttempts);
    m_options.multiplier = std::max(1, m_options.multiplier);
    m_options.jitter = std::clamp(m_options.jitter, 0.0, 1.0);
    if (!m_sleep)
        m_sleep = [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); };
    if (!m_random)
        m_random = [] { return QRandomGenerator::global()->generateDouble(); };
}

bool RetryPolicy::isRetryable(const Error &error)
{
    return error.code == ErrorCode::Unavailable || error.code == ErrorCode::BadSignature;
}

std::chrono::milliseconds RetryPolicy::backoffFor(int attempt, double unit) const
{
    qint64 base = m_options.initialBackoff.count();
    for (int i = 1; i < attempt && base < m_options.maxBackoff.count(); ++i)
        base *= m_options.multiplier;
    base = std::min<qint64>(base, m_options.maxBackoff.count());
    const double factor = 1.0 - m_options.jitter + 2.0 * m_options.jitter * std::clamp(unit, 0.0, 1.0);
    const auto jittered = qint64(double(base) * factor);
    return std::chrono::milliseconds(std::clamp<qint64>(jittered, 0, m_options.maxBackoff.count()));
}

} // namespace payonce::core
