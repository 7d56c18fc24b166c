#include "core/qa/qascenario.h"

#include "core/callback/callbackpipeline.h"

#include <QJsonArray>
#include <QUrl>

#include <cmath>

namespace payonce::core {

namespace {

const QList<QPair<ScenarioKind, QString>> kKindNames{
    {ScenarioKind::RetryStorm, QStringLiteral("retry_storm")},
    {ScenarioKind::ConcurrentBurst, QStringLiteral("concurrent_burst")},
    {ScenarioKind::GatewayReplay, QStringLiteral("gateway_replay")},
    {ScenarioKind::MqRedelivery, QStringLiteral("mq_redelivery")},
    {ScenarioKind::Mixed, QStringLiteral("mixed")},
};

Error invalid(const QString &message)
{
    return Error::make(ErrorCode::InvalidInput, message);
}

/// A whole JSON number in [min, max], or the fallback when absent.
Result<int> wholeNumber(const QJsonObject &body, const QString &name, int fallback, int min, int max)
{
    const QJsonValue value = body.value(name);
    if (value.isUndefined())
        return fallback;
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || std::floor(number) != number || number < min || number > max)
        return invalid(QStringLiteral("%1 must be a whole number in %2..%3").arg(name).arg(min).arg(max));
    return int(number);
}

Result<QStringList> stringList(const QJsonObject &body, const QString &name)
{
    const QJsonValue value = body.value(name);
    if (value.isUndefined() || value.isNull())
        return QStringList();
    if (!value.isArray())
        return invalid(QStringLiteral("%1 must be an array of strings").arg(name));
    QStringList out;
    for (const QJsonValue &item : value.toArray()) {
        if (!item.isString())
            return invalid(QStringLiteral("%1 must be an array of strings").arg(name));
        out.append(item.toString());
    }
    return out;
}

QString comparableBaseUrl(const QString &baseUrl)
{
    const QUrl url(baseUrl);
    return url.scheme().toLower() + QStringLiteral("://") + url.host().toLower() + u':'
           + QString::number(url.port(url.scheme() == u"https" ? 443 : 80));
}

} // namespace

QString scenarioKindName(ScenarioKind kind)
{
    for (const auto &[k, name] : kKindNames) {
        if (k == kind)
            return name;
    }
    return {};
}

Result<ScenarioParams> ScenarioParams::fromJson(const QJsonObject &body, const QString &defaultTarget)
{
    ScenarioParams p;
    const QJsonValue kind = body.value(QStringLiteral("kind"));
    if (kind.isUndefined())
        return invalid(QStringLiteral("missing field \"kind\""));
    bool known = false;
    for (const auto &[k, name] : kKindNames) {
        if (kind.isString() && kind.toString() == name) {
            p.kind = k;
            known = true;
        }
    }
    if (!known)
        return invalid(
            QStringLiteral("kind must be one of retry_storm, concurrent_burst, gateway_replay, mq_redelivery, mixed"));
    auto orders = wholeNumber(body, QStringLiteral("orders"), p.orders, 1, kMaxOrders);
    if (!orders)
        return orders.error();
    p.orders = orders.value();
    auto duplicates = wholeNumber(body, QStringLiteral("duplicates"), p.duplicates, 1, kMaxDuplicates);
    if (!duplicates)
        return duplicates.error();
    p.duplicates = duplicates.value();
    auto concurrency = wholeNumber(body, QStringLiteral("concurrency"), p.concurrency, 1, kMaxConcurrency);
    if (!concurrency)
        return concurrency.error();
    p.concurrency = concurrency.value();
    const QJsonValue timeScale = body.value(QStringLiteral("time_scale"));
    if (!timeScale.isUndefined()) {
        if (!timeScale.isDouble() || !(timeScale.toDouble() > 0.0) || timeScale.toDouble() > 10.0)
            return invalid(QStringLiteral("time_scale must be a number in (0, 10]"));
        p.timeScale = timeScale.toDouble();
    }
    auto targets = stringList(body, QStringLiteral("targets"));
    if (!targets)
        return targets.error();
    p.targets = targets.value();
    if (p.targets.isEmpty())
        p.targets = {defaultTarget};
    if (p.targets.size() > kMaxTargets)
        return invalid(QStringLiteral("targets: at most %1").arg(kMaxTargets));
    for (QString &target : p.targets) {
        while (target.endsWith(u'/'))
            target.chop(1);
        const QUrl url(target, QUrl::StrictMode);
        if (!url.isValid() || url.scheme() != u"http" || url.host().isEmpty() || !url.query().isEmpty()
            || !url.path().isEmpty())
            return invalid(QStringLiteral("targets: %1 is not an http://host:port base URL").arg(target));
    }
    auto layers = stringList(body, QStringLiteral("disable_layers"));
    if (!layers)
        return layers.error();
    if (auto switches = CallbackLayerSwitches::fromNames(layers.value()); !switches)
        return invalid(QStringLiteral("disable_layers: ") + switches.error().publicMessage);
    p.disableLayers = layers.value();
    p.disableLayers.removeDuplicates();
    return p;
}

QStringList ScenarioParams::targetsOutside(const QStringList &allowed) const
{
    QStringList comparable;
    for (const QString &url : allowed)
        comparable << comparableBaseUrl(url);
    QStringList outside;
    for (const QString &target : targets) {
        if (!comparable.contains(comparableBaseUrl(target)))
            outside << target;
    }
    return outside;
}

QJsonObject ScenarioParams::toJson() const
{
    return {{QStringLiteral("kind"), scenarioKindName(kind)},
            {QStringLiteral("orders"), orders},
            {QStringLiteral("duplicates"), duplicates},
            {QStringLiteral("concurrency"), concurrency},
            {QStringLiteral("time_scale"), timeScale},
            {QStringLiteral("targets"), QJsonArray::fromStringList(targets)},
            {QStringLiteral("disable_layers"), QJsonArray::fromStringList(disableLayers)}};
}

} // namespace payonce::core
