#pragma once

#include <QJsonObject>
#include <QLabel>

namespace payonce::console {

class AgentClient;

/// One line naming the agent's key store from GET /api/v1/locks "key_store": "Key store:
/// Redis via Sentinel, master 10.0.0.7:6379, fence epoch 12, 2 master switches…" — so
/// the desk sees a failover happen in the Locks and Keys views. Object name
/// "keyStoreTopology". With a client it fetches the line itself while shown (the Keys
/// view); without, the owner feeds it what it fetched (the Locks view).
class KeyStoreBanner : public QLabel {
    Q_OBJECT
public:
    explicit KeyStoreBanner(AgentClient *client, QWidget *parent = nullptr);

    void showKeyStore(const QJsonObject &keyStore);
    /// The line for a "key_store" object; empty when it names no mode.
    static QString describe(const QJsonObject &keyStore);

private:
    void refresh();

    AgentClient *m_client;
    bool m_fetching = false;
};

} // namespace payonce::console
