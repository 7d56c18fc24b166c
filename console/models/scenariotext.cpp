#include "scenariotext.h"

#include "codelabels.h"
#include "localformat.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>

namespace payonce::console {

/// The translation context of these sentences (lupdate reads it from the macro).
class ScenarioText {
    Q_DECLARE_TR_FUNCTIONS(ScenarioText)
};

namespace {

qint64 count(const QJsonObject &object, const char *key)
{
    return std::max<qint64>(0, object.value(QLatin1String(key)).toInteger());
}

QString countedNoun(qint64 n, const QString &singular, const QString &plural)
{
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? singular : plural);
}

} // namespace

QString doubleEffectsInWords(qint64 n)
{
    return countedNoun(n, ScenarioText::tr("double effect"), ScenarioText::tr("double effects"));
}

ScenarioVerdict scenarioVerdict(const QJsonObject &report)
{
    ScenarioVerdict verdict;
    verdict.passed = report.value(QStringLiteral("passed")).toBool(false);
    const qint64 orders = count(report, "orders");
    const qint64 doubles = count(report, "double_effects");
    const qint64 missing = count(report, "missing_effects");
    const qint64 lost = count(report, "lost");
    const qint64 paidOnce = count(report, "paid_once");
    QStringList problems{doubleEffectsInWords(doubles)};
    if (missing > 0)
        problems << countedNoun(missing, ScenarioText::tr("missing effect"), ScenarioText::tr("missing effects"));
    if (lost > 0)
        problems << countedNoun(lost, ScenarioText::tr("lost order"), ScenarioText::tr("lost orders"));
    if (paidOnce != orders)
        problems << ScenarioText::tr("%1 of %2 orders paid exactly once").arg(paidOnce).arg(orders);
    verdict.headline = (verdict.passed ? ScenarioText::tr("PASS") : ScenarioText::tr("FAIL")) + QStringLiteral(" — ")
                       + problems.join(u", ");
    verdict.details = ScenarioText::tr(
                          "%1 orders, %2 callback deliveries, %3 paid exactly once, %4, %5 missing effects, %6 lost, "
                          "%7 order.paid events still pending")
                          .arg(orders)
                          .arg(count(report, "deliveries"))
                          .arg(paidOnce)
                          .arg(doubleEffectsInWords(doubles))
                          .arg(missing)
                          .arg(lost)
                          .arg(count(report, "outbox_pending"));
    return verdict;
}

QString describeProgress(const QJsonObject &progress)
{
    QString phase = progress.value(QStringLiteral("phase")).toString();
    if (phase.isEmpty())
        phase = ScenarioText::tr("starting");
    QString text = ScenarioText::tr("%1: %2 of %3 orders paid at the platform, %4 confirmed, %5 created")
                       .arg(scenarioPhaseLabel(phase))
                       .arg(count(progress, "paid_at_sim"))
                       .arg(count(progress, "orders"))
                       .arg(count(progress, "confirmed"))
                       .arg(count(progress, "created"));
    const QString error = progress.value(QStringLiteral("error")).toString();
    if (!error.isEmpty())
        text += QStringLiteral(" — ") + error;
    return text;
}

bool isFinalScenarioPhase(const QString &phase)
{
    return phase == u"passed" || phase == u"failed" || phase == u"error" || phase == u"abandoned";
}

QString abandonedInWords(const QJsonObject &run)
{
    QString agent = run.value(QStringLiteral("agent_id")).toString();
    if (agent.isEmpty())
        agent = ScenarioText::tr("(unnamed)");
    QString ended = localTime(run.value(QStringLiteral("finished_at")).toString());
    if (ended.isEmpty())
        ended = ScenarioText::tr("an unknown time");
    return ScenarioText::tr("ABANDONED — agent %1 stopped renewing its lease, which ended at %2").arg(agent, ended);
}

int progressPercent(const QJsonObject &progress)
{
    const qint64 orders = count(progress, "orders");
    if (orders == 0)
        return 0;
    return int(std::clamp<qint64>(count(progress, "paid_at_sim") * 100 / orders, 0, 100));
}

} // namespace payonce::console
