#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace payonce::core {

/// One HTTP exchange of a QA scenario and its answer.
struct DriverAnswer {
    int status = 0; ///< 0: no answer (refused, timed out)
    QByteArray body;
    QByteArray layer;       ///< X-Payonce-Layer, if any
    QString transportError; ///< why status is 0
};

/// How a QA scenario reaches the outside, as a user and as the platform would: the target
/// agents' HTTP API (set-up, token, confirm — never their internals) and the simulated
/// platform's control API (pay, faults, callback targets, re-delivery). Blocking calls on
/// the calling thread; thread-safe.
class ScenarioDriver {
public:
    using Headers = QList<QPair<QByteArray, QByteArray>>;
    virtual ~ScenarioDriver() = default;
    /// method + path on the agent at baseUrl ("http://127.0.0.1:8080").
    virtual DriverAnswer agent(const QString &baseUrl, const QByteArray &method, const QString &path,
                               const QByteArray &body, const Headers &headers) = 0;
    /// method + path on the simulated platform's control API ("/sim/pay").
    virtual DriverAnswer sim(const QByteArray &method, const QString &path, const QByteArray &body) = 0;
};

} // namespace payonce::core
