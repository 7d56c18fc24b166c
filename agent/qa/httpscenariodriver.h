#pragma once

#include "core/ports/scenariodriver.h"

#include <QString>

namespace payonce::qa {

/// core::ScenarioDriver over plain HTTP/1.1 (gateway::sendBlocking: one connection per
/// call, made and gone on the calling thread), `timeoutMs` per exchange. The simulator's
/// control API is at simBaseUrl ("http://127.0.0.1:8090"); empty: every sim() call
/// answers status 0 with the reason. Thread-safe.
class HttpScenarioDriver final : public core::ScenarioDriver {
public:
    explicit HttpScenarioDriver(QString simBaseUrl, int timeoutMs = 30000)
        : m_simBaseUrl(std::move(simBaseUrl)), m_timeoutMs(timeoutMs)
    {
    }

    core::DriverAnswer agent(const QString &baseUrl, const QByteArray &method, const QString &path,
                             const QByteArray &body, const Headers &headers) override;
    core::DriverAnswer sim(const QByteArray &method, const QString &path, const QByteArray &body) override;

private:
    core::DriverAnswer exchange(const QString &url, const QByteArray &method, const QByteArray &body,
                                const Headers &headers) const;

    QString m_simBaseUrl;
    int m_timeoutMs;
};

} // namespace payonce::qa
