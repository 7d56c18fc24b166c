#include "scenariotext.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>

namespace payonce::console {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("payonce::console::ScenarioText", text);
}

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
    return countedNoun(n, tr("double effect"), tr("double effects"));
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
        problems << countedNoun(missing, tr("missing effect"), tr("missing effects"));
    if (lost > 0)
        problems << countedNoun(lost, tr("lost order"), tr("lost orders"));
    if (paidOnce != orders)
        problems << tr("%1 of %2 orders paid exactly once").arg(paidOnce).arg(orders);
    verdict.headline = (verdict.passed ? tr("PASS") : tr("FAIL")) + QStringLiteral(" — ") + problems.join(u", ");
    verdict.details = tr("%1 orders, %2 callback deliveries, %3 paid exactly once, %4, %5 missing effects, %6 lost, "
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
        phase = tr("starting");
    QString text = tr("%1: %2 of %3 orders paid at the platform, %4 confirmed, %5 created")
                       .arg(phase)
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
        agent = tr("(unnamed)");
    QString ended = run.value(QStringLiteral("finished_at")).toString();
    if (ended.isEmpty())
        ended = tr("an unknown time");
    return tr("ABANDONED — agent %1 stopped renewing its lease, which ended at %2").arg(agent, ended);
}

int progressPercent(const QJsonObject &progress)
{
    const qint64 orders = count(progress, "orders");
    if (orders == 0)
        return 0;
    return int(std::clamp<qint64>(count(progress, "paid_at_sim") * 100 / orders, 0, 100));
}

} // namespace payonce::console
