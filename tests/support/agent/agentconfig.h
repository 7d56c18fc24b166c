#pragma once

// Settings most suites put into AgentProcess::Options::extraConfig, each named for what
// it makes the agent do, so a suite's configuration reads as its reasons:
//   options.extraConfig = QJsonObject{streamEvery(100), noPatrolTimer(), noOrderCloser()};

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <utility>

namespace payonce::testsupport {

using ConfigEntry = std::pair<QString, QJsonValue>;

/// patrol.interval_ms = 0: no patrol timer, so every reconciliation run (and every finding
/// and proposal it makes) is the test's own.
inline ConfigEntry noPatrolTimer()
{
    return {QStringLiteral("patrol"), QJsonObject{{QStringLiteral("interval_ms"), 0}}};
}

/// close.pending_timeout_ms = 0: no order closer, so no PENDING order changes behind the
/// test's back.
inline ConfigEntry noOrderCloser()
{
    return {QStringLiteral("close"), QJsonObject{{QStringLiteral("pending_timeout_ms"), 0}}};
}

/// stream.interval_ms: how often the live stream sends its metrics.
inline ConfigEntry streamEvery(int intervalMs)
{
    return {QStringLiteral("stream"), QJsonObject{{QStringLiteral("interval_ms"), intervalMs}}};
}

/// qa.enabled: the QA scenario routes (and qa-token as QA's own credential).
inline ConfigEntry qaEnabled()
{
    return {QStringLiteral("qa"), QJsonObject{{QStringLiteral("enabled"), true}}};
}

} // namespace payonce::testsupport
