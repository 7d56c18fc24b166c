#pragma once

#include "apierror.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QObject>
#include <QUrl>

#include <functional>
#include <optional>

namespace payonce::console {

/// One answer of the operations API: the parsed JSON body and, when it failed, why.
struct ApiResult {
    int httpStatus = 0;
    QJsonDocument json;
    ApiError error;

    bool ok() const { return !error.isError(); }
};

/// The agent's REST operations API (docs/openapi.yaml, "Operations") over QNetworkAccessManager.
/// Every call is asynchronous: it returns at once and calls the handler on the UI
/// thread when the answer (or the failure) arrives — never if `context` is gone by then.
/// Besides the handler, every failure that concerns the connection itself (unreachable,
/// 401, 403 forbidden) is announced by connectionProblem() so one banner can show it.
class AgentClient : public QObject {
    Q_OBJECT
public:
    using Handler = std::function<void(const ApiResult &)>;

    explicit AgentClient(QObject *parent = nullptr);

    /// The agent's base URL (http://host:port) and the bearer token. The token lives in
    /// memory only.
    void setEndpoint(const QUrl &agentUrl, const QByteArray &token);
    QUrl agentUrl() const { return m_agentUrl; }
    QByteArray token() const { return m_token; }

    /// GET path (with its query, e.g. "/api/v1/findings?status=open").
    void get(const QString &pathAndQuery, QObject *context, Handler handler);
    /// POST/PUT a JSON object.
    void post(const QString &pathAndQuery, const QJsonObject &body, QObject *context, Handler handler);
    void put(const QString &pathAndQuery, const QJsonObject &body, QObject *context, Handler handler);

Q_SIGNALS:
    /// Unreachable, Unauthenticated, Throttled (429) or Forbidden: the banner's business.
    void connectionProblem(const payonce::console::ApiError &error);
    /// A success (2xx) arrived: the agent is there and accepts the token.
    void agentAnswered();

private:
    void send(const QByteArray &verb, const QString &pathAndQuery, const std::optional<QJsonObject> &body,
              QObject *context, Handler handler);

    QNetworkAccessManager m_network;
    QUrl m_agentUrl;
    QByteArray m_token;
};

} // namespace payonce::console
