#pragma once

#include "core/common/result.h"
#include "core/gateways/circuitbreaker.h"

#include <QList>
#include <QString>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

namespace payonce::core {

class AuditWriter;
class BreakerModeStore;
class Clock;

/// The agent's breakers by name ("gateway.wechat", "gateway.alipay", "redis"), all
/// reading their operator modes from one BreakerModeStore — what GET/POST
/// /api/v1/breakers work on.
///
/// setMode() stores the operator's setting (so every agent obeys it within the breakers'
/// refresh interval), applies it here at once, and appends an audit entry
/// ("breaker.mode", target "breaker:<name>") when an AuditWriter is given. NotFound for
/// an unknown name. Thread-safe; breakers live as long as the registry.
class BreakerRegistry {
public:
    BreakerRegistry(const Clock &clock, BreakerModeStore &modes, AuditWriter *audit = nullptr,
                    CircuitBreakerOptions defaults = {});
    ~BreakerRegistry();

    /// Returns the breaker of that name, creating it with `options` (or the defaults).
    CircuitBreaker &breaker(const QString &name);
    CircuitBreaker &breaker(const QString &name, const CircuitBreakerOptions &options);
    CircuitBreaker *find(const QString &name);

    QList<BreakerSnapshot> snapshots();
    /// Every breaker re-reads its operator mode from the store now (SIGHUP), instead of
    /// within its refresh interval.
    void refreshModes();

    /// expiresIn zero: no expiry.
    Result<void> setMode(const QString &name, BreakerMode mode, const QString &actor, const QString &reason,
                         std::chrono::seconds expiresIn);

    /// The conventional name of a channel's gateway breaker: "gateway.wechat".
    static QString gatewayBreakerName(const QString &channelName);
    /// The outbox webhooks' breaker for an event type: "webhook.order.paid".
    static QString webhookBreakerName(const QString &eventType);

private:
    QList<CircuitBreaker *> all();

    const Clock &m_clock;
    BreakerModeStore &m_modes;
    AuditWriter *m_audit;
    CircuitBreakerOptions m_defaults;
    std::mutex m_mutex;
    std::map<QString, std::unique_ptr<CircuitBreaker>> m_breakers;
};

} // namespace payonce::core
