#include "agentprocess.h"

#include "httptestsupport.h"
#include "support/serverharness.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtCore/qtestsupport_core.h>

#include <atomic>
#include <csignal>

namespace payonce::testsupport {

QByteArray HttpAnswer::header(const QByteArray &name) const
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

QJsonObject HttpAnswer::json() const
{
    return QJsonDocument::fromJson(body).object();
}

QString HttpAnswer::errorCode() const
{
    return json().value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString();
}

HttpAnswer httpCall(int port, const QByteArray &method, const QString &path, const QByteArray &body,
                    const QList<QPair<QByteArray, QByteArray>> &headers)
{
    QByteArray request = method + ' ' + path.toUtf8() + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto &[name, value] : headers)
        request += name + ": " + value + "\r\n";
    if (!body.isEmpty() || method == "POST" || method == "PUT")
        request += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    request += "Connection: close\r\n\r\n" + body;
    const QByteArray raw = httpExchange(port, request, 30000);
    HttpAnswer answer;
    answer.status = httpStatusOf(raw);
    answer.body = httpBodyOf(raw);
    const qsizetype headEnd = raw.indexOf("\r\n\r\n");
    const QList<QByteArray> lines = raw.left(headEnd).split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0)
            answer.headers.append({lines[i].left(colon).trimmed(), lines[i].mid(colon + 1).trimmed()});
    }
    return answer;
}

std::unique_ptr<AgentProcess> AgentProcess::start(const Options &options, QString *error)
{
    std::unique_ptr<AgentProcess> agent(new AgentProcess);
    QString dataDir = options.dataDir;
    if (dataDir.isEmpty()) {
        QTemporaryDir temporary;
        temporary.setAutoRemove(false);
        dataDir = agent->m_ownDataDir = temporary.path();
    }
    agent->m_port = options.port > 0 ? options.port : freeLoopbackPort();
    agent->m_simPort = options.simPort > 0 ? options.simPort : freeLoopbackPort();
    auto tokenOf = [](const char *name, const char *role) {
        return tokenEntry(QLatin1String(name), QLatin1String(role), QByteArray(name) + "-token");
    };
    QJsonObject config{
        {QStringLiteral("listen"), QStringLiteral("127.0.0.1:%1").arg(agent->m_port)},
        {QStringLiteral("db"), options.db},
        {QStringLiteral("data_dir"), dataDir},
        {QStringLiteral("auth"),
         QJsonObject{{QStringLiteral("tokens"), QJsonArray{tokenOf("view", "viewer"), tokenOf("desk", "operator"),
                                                           tokenOf("lead", "approver"), tokenOf("qa", "operator")}}}},
        // The QA runner's own credential, should the test enable QA (its "qa" entry above).
        {QStringLiteral("qa"), QJsonObject{{QStringLiteral("token"), QStringLiteral("qa-token")}}},
        {QStringLiteral("sim"),
         QJsonObject{{QStringLiteral("enabled"), options.sim},
                     {QStringLiteral("listen"), QStringLiteral("127.0.0.1:%1").arg(agent->m_simPort)}}},
    };
    for (auto it = options.extraConfig.begin(); it != options.extraConfig.end(); ++it) {
        const QJsonValue generated = config.value(it.key());
        if (generated.isObject() && it.value().isObject()) {
            QJsonObject merged = generated.toObject();
            const QJsonObject extra = it.value().toObject();
            for (auto sub = extra.begin(); sub != extra.end(); ++sub)
                merged.insert(sub.key(), sub.value());
            config.insert(it.key(), merged);
        } else {
            config.insert(it.key(), it.value());
        }
    }
    const QString configPath = QDir(dataDir).filePath(QStringLiteral("agent.json"));
    QFile file(configPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(config).toJson()) < 0) {
        *error = QStringLiteral("cannot write ") + configPath;
        return nullptr;
    }
    file.close();
    // It holds the tokens' hashes and the APIv3 key: the agent refuses one others can read.
    if (!file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
        *error = QStringLiteral("cannot chmod 0600 ") + configPath;
        return nullptr;
    }
    agent->m_configPath = configPath;
    agent->m_config = config;

    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString &name : environment.keys()) {
        if (name.startsWith(u"PAYONCE_"))
            environment.remove(name);
    }
    environment.insert(QStringLiteral("PAYONCE_SIM_BINARY"), QStringLiteral(PAYONCE_SIM_PATH));
    for (const QString &assignment : options.environment) {
        const qsizetype equals = assignment.indexOf(u'=');
        if (equals > 0)
            environment.insert(assignment.left(equals), assignment.mid(equals + 1));
    }
    agent->m_process.setProcessEnvironment(environment);
    agent->m_process.setProcessChannelMode(QProcess::MergedChannels);
    static std::atomic<int> started{0};
    agent->m_outputPath = QDir(dataDir).filePath(QStringLiteral("agent-output-%1.log").arg(started.fetch_add(1)));
    agent->m_process.setStandardOutputFile(agent->m_outputPath);
    agent->m_process.setWorkingDirectory(dataDir);
    QString program = QStringLiteral(PAYONCE_AGENT_PATH);
    QStringList arguments = QStringList{QStringLiteral("--config"), configPath} + options.extraArguments;
    if (options.valgrind) {
        arguments.prepend(program);
        arguments.prepend(QStringLiteral("--log-file=") + options.valgrindLog);
        arguments.prepend(QStringLiteral("--leak-check=no"));
        // Only a known false positive of valgrind 3.19 in Qt's forkfd (see the file).
        arguments.prepend(QStringLiteral("--suppressions=" PAYONCE_VALGRIND_SUPPRESSIONS));
        arguments.prepend(QStringLiteral("--error-exitcode=99"));
        program = QStringLiteral("valgrind");
    }
    const int readyTimeoutMs = options.readyTimeoutMs > 0 ? options.readyTimeoutMs : options.valgrind ? 300000 : 60000;
    agent->m_process.start(program, arguments);
    QElapsedTimer waited;
    waited.start();
    while (!agent->m_output.contains("ready on")) {
        if (agent->m_process.state() == QProcess::NotRunning || waited.elapsed() > readyTimeoutMs) {
            *error = QStringLiteral("the agent did not become ready:\n") + agent->output();
            return nullptr;
        }
        agent->m_process.waitForFinished(100); // returns at once if it exited
        agent->readOutput();
    }
    if (options.sim && !options.simNotifyTimeScale.isEmpty()) {
        const HttpAnswer set = agent->simCall("POST", QStringLiteral("/sim/notify-config"),
                                              "{\"time_scale\":" + options.simNotifyTimeScale + '}');
        if (set.status != 200) {
            *error = QStringLiteral("the simulator refused its notify-config: %1 %2")
                         .arg(set.status)
                         .arg(QString::fromUtf8(set.body));
            return nullptr;
        }
    }
    return agent;
}

AgentProcess::~AgentProcess()
{
    stop(10000);
    if (!m_ownDataDir.isEmpty())
        QDir(m_ownDataDir).removeRecursively();
}

int AgentProcess::stop(int timeoutMs)
{
    if (m_process.state() == QProcess::NotRunning)
        return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
    const qint64 pid = m_process.processId();
    m_process.terminate();
    if (!m_process.waitForFinished(timeoutMs)) {
        m_process.kill();
        m_process.waitForFinished(5000);
        readOutput();
        reportUncleanStop(QStringLiteral("pid %1 still running %2 ms after SIGTERM, killed").arg(pid).arg(timeoutMs));
        return -1;
    }
    readOutput();
    if (m_process.exitStatus() != QProcess::NormalExit) {
        reportUncleanStop(QStringLiteral("pid %1 crashed on SIGTERM: %2").arg(pid).arg(m_process.errorString()));
        return -1;
    }
    return m_process.exitCode();
}

void AgentProcess::killHard()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.kill();
    m_process.waitForFinished(10000);
    readOutput();
}

void AgentProcess::reportUncleanStop(const QString &how) const
{
    // A suite only sees stop() != 0; the agent's own last lines say where its shutdown
    // stood, and a failure seen once in a full run is otherwise lost.
    constexpr qsizetype tailBytes = 6000;
    qWarning().noquote() << "agent" << how << "- its last output:\n" << QString::fromUtf8(m_output.right(tailBytes));
}

bool AgentProcess::sendSignal(int signalNumber) const
{
    const qint64 pid = m_process.processId();
    return pid > 0 && ::kill(pid_t(pid), signalNumber) == 0;
}

bool AgentProcess::waitForOutput(const QByteArray &text, int timeoutMs)
{
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        readOutput();
        if (m_output.contains(text))
            return true;
        if (m_process.state() == QProcess::NotRunning || waited.elapsed() > timeoutMs)
            return false;
        m_process.waitForFinished(50); // returns at once if it exited
    }
}

QJsonObject tokenEntry(const QString &name, const QString &role, const QByteArray &token)
{
    return QJsonObject{{QStringLiteral("name"), name},
                       {QStringLiteral("role"), role},
                       {QStringLiteral("sha256"),
                        QString::fromLatin1(QCryptographicHash::hash(token, QCryptographicHash::Sha256).toHex())}};
}

QString AgentProcess::output()
{
    readOutput();
    return QString::fromUtf8(m_output);
}

void AgentProcess::readOutput()
{
    QFile file(m_outputPath);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(m_outputRead))
        return;
    const QByteArray more = file.readAll();
    m_outputRead += more.size();
    m_output += more;
}

HttpAnswer AgentProcess::call(const QByteArray &method, const QString &path, const QByteArray &body,
                              const QList<QPair<QByteArray, QByteArray>> &headers) const
{
    return httpCall(m_port, method, path, body, headers);
}

HttpAnswer AgentProcess::simCall(const QByteArray &method, const QString &path, const QByteArray &body) const
{
    return httpCall(m_simPort, method, path, body, {});
}

bool AgentProcess::createOrder(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                               QString *error) const
{
    return putSku(skuId, 100, error) && postOrder(orderNo, userId, amount, skuId, error);
}

bool AgentProcess::putSku(const QString &skuId, qint64 stock, QString *error) const
{
    const HttpAnswer sku = call(
        "PUT", QStringLiteral("/api/v1/skus/") + skuId,
        QJsonDocument(QJsonObject{{QStringLiteral("stock"), stock}}).toJson(QJsonDocument::Compact),
        {{"Authorization", "Bearer desk-token"}});
    if (sku.status != 200) {
        *error = QStringLiteral("PUT sku: %1 %2").arg(sku.status).arg(QString::fromUtf8(sku.body));
        return false;
    }
    return true;
}

bool AgentProcess::postOrder(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                             QString *error) const
{
    const QJsonObject order{{QStringLiteral("order_no"), orderNo},
                            {QStringLiteral("user_id"), userId},
                            {QStringLiteral("amount"), amount},
                            {QStringLiteral("items"),
                             QJsonArray{QJsonObject{{QStringLiteral("sku_id"), skuId}, {QStringLiteral("qty"), 1}}}},
                            {QStringLiteral("reward_coupon_template"), QStringLiteral("WELCOME10")},
                            {QStringLiteral("reward_points"), 100}};
    const HttpAnswer created = call("POST", QStringLiteral("/api/v1/orders"),
                                    QJsonDocument(order).toJson(QJsonDocument::Compact),
                                    {{"Authorization", "Bearer desk-token"}});
    if (created.status != 201) {
        *error = QStringLiteral("POST order: %1 %2").arg(created.status).arg(QString::fromUtf8(created.body));
        return false;
    }
    return true;
}

QString AgentProcess::issueToken(qint64 userId, const QString &orderNo) const
{
    const HttpAnswer answer = call("POST", QStringLiteral("/api/v1/payments/token"),
                                   QJsonDocument(QJsonObject{{QStringLiteral("order_no"), orderNo}}).toJson(),
                                   {{"X-User-Id", QByteArray::number(userId)}});
    return answer.status == 201 ? answer.json().value(QStringLiteral("token")).toString() : QString();
}

QString AgentProcess::confirmPayment(const QString &orderNo, qint64 userId, const QString &channel,
                                     QString *error) const
{
    const QString token = issueToken(userId, orderNo);
    const HttpAnswer confirmed = call(
        "POST", QStringLiteral("/api/v1/payments/confirm"),
        QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                  {QStringLiteral("order_no"), orderNo},
                                  {QStringLiteral("channel"), channel}})
            .toJson(QJsonDocument::Compact),
        {{"X-User-Id", QByteArray::number(userId)}, {"Idempotency-Key", orderNo.toUtf8()}});
    if (confirmed.status != 200) {
        *error = QStringLiteral("confirm: %1 %2").arg(confirmed.status).arg(QString::fromUtf8(confirmed.body));
        return {};
    }
    return confirmed.json().value(QStringLiteral("payment_no")).toString();
}

HttpAnswer AgentProcess::simPay(const QString &channel, const QString &paymentNo) const
{
    return simCall("POST", QStringLiteral("/sim/pay"),
                   QStringLiteral("{\"channel\":\"%1\",\"out_trade_no\":\"%2\"}").arg(channel, paymentNo).toUtf8());
}

HttpAnswer AgentProcess::simDuplicateNotifications(const QString &channel, int copies) const
{
    const QString faults = copies > 0 ? QStringLiteral("{\"channel\":\"%1\",\"duplicate\":%2}").arg(channel).arg(copies)
                                      : QStringLiteral("{\"channel\":\"%1\"}").arg(channel);
    return simCall("POST", QStringLiteral("/sim/faults"), faults.toUtf8());
}

bool AgentProcess::simPayWithCopies(const QString &channel, const QString &paymentNo, int copies, int timeoutMs,
                                    QString *error) const
{
    const auto failed = [&](const char *step, const HttpAnswer &answer) {
        *error =
            QStringLiteral("%1: %2 %3").arg(QLatin1String(step)).arg(answer.status).arg(QString::fromUtf8(answer.body));
        return false;
    };
    if (const HttpAnswer set = simDuplicateNotifications(channel, copies); set.status != 200)
        return failed("sim faults", set);
    if (const HttpAnswer paid = simPay(channel, paymentNo); paid.status != 200)
        return failed("sim pay", paid);
    if (!QTest::qWaitFor([&] { return notificationState(paymentNo) == u"acknowledged"; }, timeoutMs)) {
        *error = QStringLiteral("the notification of %1 was not acknowledged within %2 ms (state \"%3\")")
                     .arg(paymentNo)
                     .arg(timeoutMs)
                     .arg(notificationState(paymentNo));
        return false;
    }
    if (const HttpAnswer cleared = simDuplicateNotifications(channel, 0); cleared.status != 200)
        return failed("sim faults cleared", cleared);
    return true;
}

QString AgentProcess::notificationState(const QString &paymentNo) const
{
    const QJsonArray notifications = simCall("GET", QStringLiteral("/sim/notifications/") + paymentNo)
                                         .json()
                                         .value(QStringLiteral("notifications"))
                                         .toArray();
    return notifications.isEmpty() ? QString()
                                   : notifications.first().toObject().value(QStringLiteral("state")).toString();
}

std::map<QString, double> AgentProcess::scrapeMetrics() const
{
    const HttpAnswer answer = call("GET", QStringLiteral("/metrics"));
    if (answer.status != 200)
        qWarning("scrape: %d %s", answer.status, answer.body.constData());
    return parseMetricSamples(answer.body);
}

QString AgentProcess::confirmedOrder(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                                     const QString &channel, QString *error) const
{
    if (!createOrder(orderNo, userId, amount, skuId, error))
        return {};
    return confirmPayment(orderNo, userId, channel, error);
}

QString AgentProcess::orderPaidAtSim(const QString &orderNo, qint64 userId, const QString &amount, const QString &skuId,
                                     QString *error) const
{
    const QString paymentNo = confirmedOrder(orderNo, userId, amount, skuId, QStringLiteral("wechat"), error);
    if (paymentNo.isEmpty())
        return {};
    const HttpAnswer paid = simPay(QStringLiteral("wechat"), paymentNo);
    if (paid.status != 200) {
        *error = QStringLiteral("sim pay: %1 %2").arg(paid.status).arg(QString::fromUtf8(paid.body));
        return {};
    }
    return paymentNo;
}

std::map<QString, double> parseMetricSamples(const QByteArray &text)
{
    std::map<QString, double> samples;
    for (const QByteArray &line : text.split('\n')) {
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const qsizetype space = line.lastIndexOf(' ');
        samples[QString::fromUtf8(line.left(space))] = line.mid(space + 1).toDouble();
    }
    return samples;
}

int statusFrom(const QString &source, int port, const QByteArray &method, const QString &path, const QByteArray &body,
               const QByteArray &token)
{
    QTcpSocket socket;
    if (!socket.bind(QHostAddress(source)))
        return -1;
    socket.connectToHost(QHostAddress::LocalHost, quint16(port));
    if (!socket.waitForConnected(10000))
        return -2;
    QByteArray request = method + ' ' + path.toUtf8() + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (!token.isEmpty())
        request += "Authorization: Bearer " + token + "\r\n";
    request += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n"
               + body;
    socket.write(request);
    QByteArray answer;
    while (!answer.contains("\r\n") && socket.waitForReadyRead(10000))
        answer += socket.readAll();
    const QList<QByteArray> statusLine = answer.left(answer.indexOf("\r\n")).split(' ');
    return statusLine.size() >= 2 ? statusLine.at(1).toInt() : -3;
}

} // namespace payonce::testsupport
