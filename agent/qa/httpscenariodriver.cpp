#include "httpscenariodriver.h"

#include "gateway/blockinghttp.h"

namespace payonce::qa {

core::DriverAnswer HttpScenarioDriver::exchange(const QString &url, const QByteArray &method, const QByteArray &body,
                                                const Headers &headers) const
{
    gateway::HttpRequest request;
    request.method = method;
    request.url = QUrl(url);
    request.headers = headers;
    if (!body.isEmpty())
        request.headers.append(qMakePair(QByteArray("Content-Type"), QByteArray("application/json")));
    request.body = body;
    request.timeoutMs = m_timeoutMs;
    const gateway::HttpResponse response = gateway::sendBlocking(request);
    core::DriverAnswer answer;
    if (response.outcome != gateway::HttpResponse::Outcome::Completed) {
        answer.transportError = QStringLiteral("%1 %2: %3").arg(QString::fromLatin1(method), url, response.errorText);
        return answer;
    }
    answer.status = response.status;
    answer.body = response.body;
    answer.layer = response.header("X-Payonce-Layer");
    return answer;
}

core::DriverAnswer HttpScenarioDriver::agent(const QString &baseUrl, const QByteArray &method, const QString &path,
                                             const QByteArray &body, const Headers &headers)
{
    return exchange(baseUrl + path, method, body, headers);
}

core::DriverAnswer HttpScenarioDriver::sim(const QByteArray &method, const QString &path, const QByteArray &body)
{
    if (m_simBaseUrl.isEmpty()) {
        core::DriverAnswer answer;
        answer.transportError = QStringLiteral("no simulated platform: start the agent with sim.enabled, "
                                               "or point wechat.base_url at a payonce-sim");
        return answer;
    }
    return exchange(m_simBaseUrl + path, method, body, {});
}

} // namespace payonce::qa
