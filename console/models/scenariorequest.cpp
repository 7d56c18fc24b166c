#include "scenariorequest.h"

#include "codelabels.h"

#include <QCoreApplication>
#include <QJsonArray>

namespace payonce::console {

namespace {

QStringList layerLabels(const QStringList &layers)
{
    QStringList labels;
    for (const QString &layer : layers)
        labels << layerLabel(layer);
    return labels;
}

} // namespace

const QStringList &ScenarioRequest::kinds()
{
    static const QStringList names{QStringLiteral("mixed"), QStringLiteral("retry_storm"),
                                   QStringLiteral("concurrent_burst"), QStringLiteral("gateway_replay"),
                                   QStringLiteral("mq_redelivery")};
    return names;
}

const QStringList &ScenarioRequest::switchableLayers()
{
    static const QStringList names{QStringLiteral("lock"), QStringLiteral("unique_index"),
                                   QStringLiteral("state_machine"), QStringLiteral("side_effect")};
    return names;
}

QJsonObject ScenarioRequest::toJson() const
{
    QJsonObject body{{QStringLiteral("kind"), kind},
                     {QStringLiteral("orders"), orders},
                     {QStringLiteral("duplicates"), duplicates},
                     {QStringLiteral("concurrency"), concurrency},
                     {QStringLiteral("time_scale"), timeScale},
                     {QStringLiteral("targets"), QJsonArray::fromStringList(targets)},
                     {QStringLiteral("disable_layers"), QJsonArray::fromStringList(disableLayers)}};
    if (!reason.trimmed().isEmpty())
        body.insert(QStringLiteral("reason"), reason.trimmed());
    return body;
}

QString ScenarioRequest::plan() const
{
    const auto tr = [](const char *text) {
        return QCoreApplication::translate("payonce::console::ScenarioRequest", text);
    };
    QString text = tr("%1: %2 orders, %3 duplicates each, %4 at once, time ×%5, against %6; ")
                       .arg(scenarioKindLabel(kind))
                       .arg(orders)
                       .arg(duplicates)
                       .arg(concurrency)
                       .arg(timeScale)
                       .arg(targets.isEmpty() ? tr("the connected agent") : targets.join(u", "));
    text += disableLayers.isEmpty() ? tr("every layer on")
                                    : tr("switched off for its orders: %1").arg(layerLabels(disableLayers).join(u", "));
    return text;
}

} // namespace payonce::console
