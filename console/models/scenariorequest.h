#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace payonce::console {

/// The body of POST /api/v1/qa/scenarios as the QA form fills it, and the sentence that
/// tells the operator what it will do before it is started. The agent validates the
/// limits (docs/openapi.yaml); the form's ranges only keep typing errors away.
struct ScenarioRequest {
    QString kind = QStringLiteral("mixed");
    int orders = 100;
    int duplicates = 5;
    int concurrency = 16;
    double timeScale = 0.001;
    QStringList targets; ///< agent base URLs; empty: the agent that receives the request
    QStringList disableLayers;
    QString reason;

    /// The kinds and the layers a scenario may switch off, as docs/openapi.yaml names them.
    static const QStringList &kinds();
    static const QStringList &switchableLayers();

    QJsonObject toJson() const;
    /// "retry_storm: 10 orders, each notification 3 more times, 5 at once, against
    /// http://…; lock switched off".
    QString plan() const;
};

} // namespace payonce::console
