#include "executionlane.h"

#include "core/metrics/metricsregistry.h"

#include <algorithm>

namespace payonce::http {

QString laneName(Lane lane)
{
    switch (lane) {
    case Lane::General: return QStringLiteral("general");
    case Lane::Callbacks: return QStringLiteral("callbacks");
    case Lane::Gateway: return QStringLiteral("gateway");
    }
    return QStringLiteral("general");
}

ExecutionLane::ExecutionLane(Lane lane, int threads, int queueLimit) : m_lane(lane), m_queueLimit(queueLimit)
{
    m_pool.setMaxThreadCount(std::max(1, threads));
    m_pool.setObjectName(QStringLiteral("payonce-http-") + laneName(lane));
}

ExecutionLane::~ExecutionLane()
{
    m_pool.waitForDone();
}

void ExecutionLane::countRejectionsIn(core::MetricsRegistry &registry)
{
    m_rejectedCounter = &registry.counter(QStringLiteral("payonce_http_lane_rejected_total"),
                                          QStringLiteral("Requests answered 503 because their lane's queue was full"),
                                          {{QStringLiteral("lane"), laneName(m_lane)}});
}

bool ExecutionLane::tryAdmit()
{
    const int before = m_admitted.fetch_add(1, std::memory_order_acq_rel);
    if (m_queueLimit < 0 || before < threads() + m_queueLimit)
        return true;
    m_admitted.fetch_sub(1, std::memory_order_acq_rel);
    m_rejected.fetch_add(1, std::memory_order_relaxed);
    if (m_rejectedCounter)
        m_rejectedCounter->add();
    return false;
}

} // namespace payonce::http
