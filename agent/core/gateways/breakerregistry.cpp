#include "core/gateways/breakerregistry.h"

#include "core/ports/auditwriter.h"
#include "core/ports/breakermodestore.h"
#include "core/ports/clock.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payonce::core {

BreakerRegistry::BreakerRegistry(const Clock &clock, BreakerModeStore &modes, AuditWriter *audit,
                                 CircuitBreakerOptions defaults)
    : m_clock(clock), m_modes(modes), m_audit(audit), m_defaults(defaults)
{
}

BreakerRegistry::~BreakerRegistry() = default;

CircuitBreaker &BreakerRegistry::breaker(const QString &name)
{
    return breaker(name, m_defaults);
}

CircuitBreaker &BreakerRegistry::breaker(const QString &name, const CircuitBreakerOptions &options)
{
    std::lock_guard guard(m_mutex);
    auto &slot = m_breakers[name];
    if (!slot)
        slot = std::make_unique<CircuitBreaker>(name, m_clock, &m_modes, options);
    return *slot;
}

CircuitBreaker *BreakerRegistry::find(const QString &name)
{
    std::lock_guard guard(m_mutex);
    const auto it = m_breakers.find(name);
    return it == m_breakers.end() ? nullptr : it->second.get();
}

QList<CircuitBreaker *> BreakerRegistry::all()
{
    QList<CircuitBreaker *> list;
    std::lock_guard guard(m_mutex);
    for (auto &[name, breaker] : m_breakers)
        list.append(breaker.get());
    return list;
}

QList<BreakerSnapshot> BreakerRegistry::snapshots()
{
    QList<BreakerSnapshot> out;
    for (CircuitBreaker *breaker : all())
        out.append(breaker->snapshot());
    return out;
}

void BreakerRegistry::refreshModes()
{
    for (CircuitBreaker *breaker : all())
        breaker->refreshMode();
}

namespace {
QString settingJson(const BreakerModeSetting &setting)
{
    QJsonObject object{{QStringLiteral("mode"), breakerModeName(setting.mode)}};
    if (setting.expiresAtMs)
        object.insert(QStringLiteral("expires_at_ms"), *setting.expiresAtMs);
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}
} // namespace

Result<void> BreakerRegistry::setMode(const QString &name, BreakerMode mode, const QString &actor,
                                      const QString &reason, std::chrono::seconds expiresIn)
{
    CircuitBreaker *target = find(name);
    if (!target)
        return Error::make(ErrorCode::NotFound, QStringLiteral("no breaker named %1").arg(name));
    const BreakerModeSetting before = target->snapshot().mode;
    BreakerModeSetting setting;
    setting.mode = mode;
    setting.actor = actor;
    setting.reason = reason;
    setting.changedAtMs = m_clock.nowMs();
    if (expiresIn.count() > 0)
        setting.expiresAtMs = setting.changedAtMs + std::chrono::milliseconds(expiresIn).count();
    auto stored = m_modes.set(name, setting);
    if (!stored.ok())
        return stored.error();
    target->setLocalMode(setting);
    if (m_audit) {
        auto appended = m_audit->append(AuditEntry{actor,
                                                   QStringLiteral("breaker.mode"),
                                                   QStringLiteral("breaker:") + name,
                                                   settingJson(before),
                                                   settingJson(setting),
                                                   reason,
                                                   {}});
        if (!appended.ok())
            return appended.error();
    }
    return {};
}

QString BreakerRegistry::gatewayBreakerName(const QString &channelName)
{
    return QStringLiteral("gateway.") + channelName;
}

QString BreakerRegistry::webhookBreakerName(const QString &eventType)
{
    return QStringLiteral("webhook.") + eventType;
}

} // namespace payonce::core
