#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QProcess>
#include <QString>

#include <map>
#include <memory>

namespace payonce::testsupport {

/// One HTTP answer, parsed.
struct HttpAnswer {
    int status = 0;
    QByteArray body;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray header(const QByteArray &name) const;
    QJsonObject json() const;
    /// error.code of a contract error body, or empty.
    QString errorCode() const;
};

/// The real payonce-agent binary as a child process, configured by the test: a database
/// URL, free loopback ports, sim.enabled (so payonce-sim runs beside it), and four API
/// tokens — "view-token" (viewer), "desk-token" (operator), "lead-token" (approver) and
/// "qa-token" (operator), the last also as qa.token: QA's own credential, should the
/// test set qa.enabled.
class AgentProcess {
public:
    struct Options {
        QString db;      ///< --db
        bool sim = true; ///< sim.enabled on a free port
        int simPort = 0; ///< 0: a free one
        QString dataDir; ///< empty: a temporary folder of its own
        QStringList extraArguments;
        /// Merged into the generated config file: a key whose value is an object in both
        /// is merged key by key ({"http": {"idle_timeout_ms": 2000}} keeps the rest), any
        /// other value replaces the generated one.
        QJsonObject extraConfig;
        /// Extra environment for the agent, "NAME=value" (test hooks such as PAYONCE_TEST_PAUSE_AT).
        QStringList environment;
        /// 0: a free port. Fixed when a restarted agent must keep its address (notify URLs).
        int port = 0;
        /// Run the agent as `valgrind --error-exitcode=99 --leak-check=no
        /// --log-file=<valgrindLog> <agent> ...` (payonce-sim, its child, runs natively),
        /// with tests/support/agent/valgrind-qt.supp (one false positive of Qt's forkfd).
        /// stop() then returns 99 when valgrind found an error.
        bool valgrind = false;
        QString valgrindLog;
        /// How long to wait for "ready on"; 0: 60 s, or 300 s under valgrind.
        int readyTimeoutMs = 0;
        /// With sim: once ready, the simulator's notifications are sped up by this
        /// (POST /sim/notify-config {"time_scale": …}, e.g. "0.001"); empty: its own pace.
        QByteArray simNotifyTimeScale;
    };
    /// Null and *error set (with the agent's output) when it did not log "ready" in time.
    static std::unique_ptr<AgentProcess> start(const Options &options, QString *error);
    ~AgentProcess();

    int port() const { return m_port; }
    int simPort() const { return m_simPort; }
    qint64 pid() const { return m_process.processId(); }
    /// SIGTERM and wait: the exit code, -1 when it did not exit normally in time.
    int stop(int timeoutMs = 30000);
    /// kill -9, as a crash or the OOM killer would, and reaped: a killed agent is not
    /// stopped again (nor reported as one that crashed on SIGTERM).
    void killHard();
    QString output();
    /// Whether the agent is still running.
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    /// Sends signalNumber (SIGHUP, …) to the agent.
    bool sendSignal(int signalNumber) const;
    /// Waits until the agent's output (since it started) holds text; false at the timeout
    /// or when the agent exits first.
    bool waitForOutput(const QByteArray &text, int timeoutMs);
    /// The config file the agent was started with (a test may rewrite it, then SIGHUP).
    QString configPath() const { return m_configPath; }
    /// The config file as generated (the tokens, the extra settings).
    QJsonObject config() const { return m_config; }

    /// One request on a fresh connection; headers as "Name: value" pairs.
    HttpAnswer call(const QByteArray &method, const QString &path, const QByteArray &body = {},
                    const QList<QPair<QByteArray, QByteArray>> &headers = {}) const;
    /// The same against the simulator's control API.
    HttpAnswer simCall(const QByteArray &method, const QString &path, const QByteArray &body = {}) const;

    /// Set-up through the operator API: a SKU with stock, and an order of one unit of it.
    bool createOrder(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                     QString *error) const;
    /// PUT /api/v1/skus/{skuId} with that stock (operator).
    bool putSku(const QString &skuId, qint64 stock, QString *error) const;
    /// POST /api/v1/orders (operator): one unit of skuId, reward coupon WELCOME10 and 100
    /// points — one of each effect for the callback path to make.
    bool postOrder(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                   QString *error) const;
    /// POST /api/v1/payments/token for the user; the token or empty.
    QString issueToken(qint64 userId, const QString &orderNo) const;
    /// A token, then POST /api/v1/payments/confirm on the channel with the order_no as
    /// Idempotency-Key: the payment_no (the platform's out_trade_no), or empty and *error.
    QString confirmPayment(const QString &orderNo, qint64 userId, const QString &channel, QString *error) const;
    /// GET /metrics, its samples (parseMetricSamples()); a warning when it was not answered 200.
    std::map<QString, double> scrapeMetrics() const;
    /// createOrder(), then confirmPayment() on `channel`: the payment_no, or empty and *error.
    QString confirmedOrder(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                           const QString &channel, QString *error) const;
    /// The simulator's user pays the trade on `channel` ("wechat", "alipay"): POST /sim/pay,
    /// after which the simulator notifies the agent.
    HttpAnswer simPay(const QString &channel, const QString &paymentNo) const;
    /// From now on the simulator sends every notification on `channel` as `copies`
    /// simultaneous copies (a replaying proxy, two agents); 0 clears the channel's faults.
    HttpAnswer simDuplicateNotifications(const QString &channel, int copies) const;
    /// simPay() while the simulator sends every notification on `channel` as `copies`
    /// copies: true once its first notification is acknowledged (within timeoutMs) and the
    /// copies are switched off again; false and *error saying which step failed. The other
    /// copies of that delivery may still be inside the agent.
    bool simPayWithCopies(const QString &channel, const QString &paymentNo, int copies, int timeoutMs,
                          QString *error) const;
    /// The state of the simulator's first notification for the payment ("pending",
    /// "acknowledged", …), or empty when it sent none.
    QString notificationState(const QString &paymentNo) const;
    /// createOrder(), confirmPayment() on WeChat, then the simulator's user pays (it then
    /// notifies this agent): the payment_no, or empty and *error. Needs sim.enabled.
    QString orderPaidAtSim(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                           QString *error) const;

private:
    void reportUncleanStop(const QString &how) const;
    /// Appends what the agent wrote since the last call to m_output.
    void readOutput();
    AgentProcess() = default;
    QProcess m_process;
    /// The agent's stdout and stderr go to this file, not to a pipe: a pipe nobody reads
    /// while the test blocks (a harness call, a benchmark phase) fills at 64 KiB, and the
    /// agent's logging — and every thread that logs — blocks on it.
    QString m_outputPath;
    qint64 m_outputRead = 0;
    QByteArray m_output;
    QString m_ownDataDir;
    int m_port = 0;
    int m_simPort = 0;
    QString m_configPath;
    QJsonObject m_config;
};

/// One entry of auth.tokens: {"name", "role", "sha256" of the token}.
QJsonObject tokenEntry(const QString &name, const QString &role, const QByteArray &token);

/// A Prometheus text scrape's "name{labels} value" lines, keyed by "name{labels}" as written.
std::map<QString, double> parseMetricSamples(const QByteArray &text);

HttpAnswer httpCall(int port, const QByteArray &method, const QString &path, const QByteArray &body,
                    const QList<QPair<QByteArray, QByteArray>> &headers);

/// The status of one request to 127.0.0.1:port sent from the loopback address `source`
/// (127.0.0.2, …), with `Authorization: Bearer token` unless token is empty; negative when
/// it could not be sent or no status came. The agent limits failed authentications per
/// peer address (10 a minute): a test that fails on purpose more often speaks from
/// addresses of its own.
int statusFrom(const QString &source, int port, const QByteArray &method, const QString &path, const QByteArray &body,
               const QByteArray &token);

} // namespace payonce::testsupport
