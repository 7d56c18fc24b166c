#include "agentcluster.h"

#include "crypto/aesgcm.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>

namespace payonce::testsupport {

std::unique_ptr<AgentCluster> AgentCluster::start(Dialect dialect, int agents, QString *error, Redis redis)
{
    std::unique_ptr<AgentCluster> cluster(new AgentCluster);
    cluster->m_db = MigratedDatabase::start(dialect, error);
    if (!cluster->m_db)
        return nullptr;
    if (redis == Redis::Sentinel) {
        cluster->m_sentinel = RedisSentinelTopology::start(error);
        if (!cluster->m_sentinel)
            return nullptr;
    } else if (redis == Redis::Cluster) {
        cluster->m_redisCluster = RedisClusterTopology::start(error);
        if (!cluster->m_redisCluster)
            return nullptr;
    } else {
        cluster->m_redis = RedisServer::start(error);
        if (!cluster->m_redis)
            return nullptr;
    }
    cluster->m_sim = SimProcess::start(error);
    if (!cluster->m_sim)
        return nullptr;
    if (!cluster->configurePlatformRetries(error))
        return nullptr;
    cluster->m_relay = std::make_unique<NotificationRelay>();
    for (int i = 0; i < agents; ++i) {
        cluster->m_ports.append(freeLoopbackPort());
        cluster->m_agents.emplace_back();
    }
    for (int i = 0; i < agents; ++i) {
        if (!cluster->startAgent(i, {}, error))
            return nullptr;
    }
    return cluster;
}

AgentCluster::~AgentCluster()
{
    // A frozen agent cannot act on SIGTERM: thaw every one before stopping it.
    for (const auto &agent : m_agents) {
        if (agent)
            ::kill(pid_t(agent->pid()), SIGCONT);
    }
    m_agents.clear();
}

bool AgentCluster::configurePlatformRetries(QString *error)
{
    // To the relay the platform sends each notification once and would retry only hours
    // later (time_scale 1000): from then on the test is the platform that retries. To the
    // agents it retries by itself, WeChat's 15 s as 150 ms.
    const QByteArray config = m_notifications == Notifications::ToRelay ? "{\"time_scale\":1000,\"timeout_ms\":60000}"
                                                                        : "{\"time_scale\":0.01,\"timeout_ms\":60000}";
    const HttpAnswer configured = httpCall(m_sim->port(), "POST", QStringLiteral("/sim/notify-config"), config, {});
    if (configured.status != 200) {
        *error =
            QStringLiteral("sim notify-config: %1 %2").arg(configured.status).arg(QString::fromUtf8(configured.body));
        return false;
    }
    return true;
}

bool AgentCluster::setNotifications(Notifications notifications, QString *error)
{
    m_notifications = notifications;
    if (!configurePlatformRetries(error))
        return false;
    for (int i = 0; i < size(); ++i) {
        if (!startAgent(i, {}, error))
            return false;
    }
    return true;
}

QString AgentCluster::agentUrl(int i) const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_ports.at(i));
}

QList<int> AgentCluster::agentPorts() const
{
    return m_ports;
}

AgentProcess::Options AgentCluster::optionsFor(int i) const
{
    // Every other agent is a QA peer: a scenario may target the whole cluster.
    QJsonArray peers;
    for (int other = 0; other < size(); ++other) {
        if (other != i)
            peers.append(agentUrl(other));
    }
    AgentProcess::Options options;
    options.db = m_db.server->url();
    options.sim = false;
    options.port = m_ports.at(i);
    options.extraConfig = QJsonObject{
        {QStringLiteral("wechat"), m_sim->weChatConfig()},
        {QStringLiteral("redis"), m_redis ? m_redis->url() : QStringLiteral("redis://127.0.0.1/0")},
        {QStringLiteral("instances"), size()},
        {QStringLiteral("instance_id"), QStringLiteral("agent-%1").arg(i + 1)},
        {QStringLiteral("qa"), QJsonObject{{QStringLiteral("enabled"), true}, {QStringLiteral("peers"), peers}}},
        // The patrol is not under test here and would only compete for the two cores.
        {QStringLiteral("patrol"), QJsonObject{{QStringLiteral("interval_ms"), 0}}},
    };
    if (m_sentinel) { // the URL above gives only the db: the Sentinels name the master
        options.extraConfig.insert(QStringLiteral("redis_sentinels"),
                                   QJsonArray::fromStringList(m_sentinel->sentinels()));
        options.extraConfig.insert(QStringLiteral("redis_master_name"), m_sentinel->masterName());
    }
    if (m_redisCluster) // the same: the nodes are the seeds, the URL gives db 0
        options.extraConfig.insert(QStringLiteral("redis_cluster"),
                                   QJsonArray::fromStringList(m_redisCluster->nodes()));
    if (m_notifications == Notifications::ToRelay)
        options.extraConfig.insert(QStringLiteral("public_base_url"), m_relay->baseUrl());
    return options;
}

void AgentCluster::killAgent(int i)
{
    auto &agent = m_agents.at(size_t(i));
    if (!agent)
        return;
    agent->killHard();
    agent.reset();
}

bool AgentCluster::startAgent(int i, const QStringList &environment, QString *error)
{
    auto &agent = m_agents.at(size_t(i));
    if (agent) {
        ::kill(pid_t(agent->pid()), SIGCONT);
        agent.reset();
    }
    AgentProcess::Options options = optionsFor(i);
    options.environment = environment;
    agent = AgentProcess::start(options, error);
    if (!agent)
        error->prepend(QStringLiteral("agent-%1: ").arg(i + 1));
    return agent != nullptr;
}

QList<CapturedRequest> AgentCluster::paidOrders(const QString &prefix, int count, QString *error)
{
    const QString sku = QStringLiteral("SKU-") + prefix;
    if (!agent(0).putSku(sku, count + 10, error))
        return {};
    // Orders made and confirmed through every agent in turn, six at a time.
    std::mutex mutex;
    QStringList failures;
    QStringList paymentNos(count);
    constexpr int kMakers = 6;
    // On a thread of its own: this one keeps reading the agents' output pipes meanwhile.
    std::atomic<bool> made{false};
    std::thread makers([&] {
        runConcurrently(kMakers, [&](int maker) {
            for (int i = maker; i < count; i += kMakers) {
                const AgentProcess &via = *m_agents.at(size_t(i % size()));
                const QString orderNo = prefix + QStringLiteral("%1").arg(i, 4, 10, QLatin1Char('0'));
                QString failure;
                QString paymentNo;
                if (via.postOrder(orderNo, 5000 + i, QStringLiteral("9.90"), sku, &failure))
                    paymentNo = via.confirmPayment(orderNo, 5000 + i, QStringLiteral("wechat"), &failure);
                std::lock_guard guard(mutex);
                if (paymentNo.isEmpty())
                    failures << orderNo + QStringLiteral(": ") + failure;
                paymentNos[i] = paymentNo;
            }
        });
        made = true;
    });
    while (!made)
        QTest::qWait(20);
    makers.join();
    if (!failures.isEmpty()) {
        *error = failures.join(u'\n');
        // What the agents said about it: their last warnings.
        for (int i = 0; i < size(); ++i) {
            if (!isRunning(i))
                continue;
            const QStringList warnings = agent(i).output().split(u'\n').filter(QStringLiteral(" warning "));
            *error += QStringLiteral("\nagent-%1's last warnings:\n  ").arg(i + 1)
                      + warnings.mid(warnings.size() - 10).join(QStringLiteral("\n  "));
        }
        return {};
    }
    // Paid one by one at the simulator, the relay taking each notification as it comes.
    const qsizetype before = m_relay->captured.size();
    for (const QString &paymentNo : std::as_const(paymentNos)) {
        const HttpAnswer paid = httpCall(
            m_sim->port(), "POST", QStringLiteral("/sim/pay"),
            QStringLiteral("{\"channel\":\"wechat\",\"out_trade_no\":\"%1\"}").arg(paymentNo).toUtf8(), {});
        if (paid.status != 200) {
            *error =
                QStringLiteral("sim pay %1: %2 %3").arg(paymentNo).arg(paid.status).arg(QString::fromUtf8(paid.body));
            return {};
        }
        QCoreApplication::processEvents();
    }
    QElapsedTimer waited;
    waited.start();
    while (m_relay->captured.size() < before + count && waited.elapsed() < 60000)
        QTest::qWait(20);
    if (m_relay->captured.size() != before + count) {
        *error = QStringLiteral("the relay got %1 notifications for %2 payments")
                     .arg(m_relay->captured.size() - before)
                     .arg(count);
        return {};
    }
    return m_relay->captured.mid(before, count);
}

QString AgentCluster::payNoOf(const CapturedRequest &notification) const
{
    const QJsonObject resource = QJsonDocument::fromJson(notification.body).object().value(u"resource").toObject();
    const QByteArray key = m_sim->weChatConfig().value(u"apiv3_key").toString().toLatin1();
    auto plain = crypto::aes256GcmDecrypt(key, resource.value(u"nonce").toString().toLatin1(),
                                          resource.value(u"associated_data").toString().toLatin1(),
                                          resource.value(u"ciphertext").toString().toLatin1());
    if (!plain.ok())
        return {};
    return QJsonDocument::fromJson(plain.value()).object().value(u"transaction_id").toString();
}

qint64 AgentCluster::stockLeft(const QString &prefix)
{
    return countRows(database(), QStringLiteral("SELECT stock FROM skus WHERE sku_id = ?"),
                     {QVariant(QStringLiteral("SKU-") + prefix)});
}

bool AgentCluster::startNginx(QString *error)
{
    m_nginx = NginxFront::start(m_ports, QStringLiteral(PAYONCE_SOURCE_DIR "/resources/nginx/payonce.conf"), error);
    return m_nginx != nullptr;
}

double AgentCluster::metric(int i, const QString &name)
{
    if (!isRunning(i))
        return -1;
    const auto samples = parseMetricSamples(agent(i).call("GET", QStringLiteral("/metrics")).body);
    const auto found = samples.find(name);
    return found == samples.end() ? -1 : found->second;
}

} // namespace payonce::testsupport
