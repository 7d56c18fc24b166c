#include "keystorebanner.h"

#include "pollwhileshown.h"

#include "console/net/agentclient.h"

namespace payonce::console {

namespace {

constexpr int kPollMs = 5000;

} // namespace

KeyStoreBanner::KeyStoreBanner(AgentClient *client, QWidget *parent) : QLabel(parent), m_client(client)
{
    setObjectName(QStringLiteral("keyStoreTopology"));
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    if (m_client)
        new PollWhileShown(this, kPollMs, [this] { refresh(); });
}

void KeyStoreBanner::showKeyStore(const QJsonObject &keyStore)
{
    setText(describe(keyStore));
}

void KeyStoreBanner::refresh()
{
    if (m_client->agentUrl().isEmpty() || m_fetching)
        return;
    m_fetching = true;
    m_client->get(QStringLiteral("/api/v1/locks"), this, [this](const ApiResult &result) {
        m_fetching = false;
        if (result.ok() && result.json.isObject())
            showKeyStore(result.json.object().value(QStringLiteral("key_store")).toObject());
    });
}

QString KeyStoreBanner::describe(const QJsonObject &keyStore)
{
    const QString mode = keyStore.value(QStringLiteral("mode")).toString();
    if (mode.isEmpty())
        return QString();
    const QString master = keyStore.value(QStringLiteral("master")).toString();
    QString text;
    if (mode == QLatin1String("embedded"))
        text = tr("Key store: embedded (this agent only)");
    else if (mode == QLatin1String("sentinel"))
        text = tr("Key store: Redis via Sentinel, master %1").arg(master.isEmpty() ? tr("unknown") : master);
    else if (mode == QLatin1String("cluster"))
        text = tr("Key store: Redis Cluster, masters %1").arg(master.isEmpty() ? tr("unknown") : master);
    else
        text = tr("Key store: Redis at %1").arg(master);
    text += tr(", fence epoch %1").arg(keyStore.value(QStringLiteral("fence_epoch")).toString());
    const qint64 switches = keyStore.value(QStringLiteral("master_switches")).toInteger();
    if (switches > 0)
        text += tr(", %n master switch(es) since the agent started", nullptr, int(switches));
    if (keyStore.value(QStringLiteral("degraded")).toBool())
        text += tr(" — UNREACHABLE: payments go on without locks (database layers only)");
    return text;
}

} // namespace payonce::console
