#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace payonce::testsupport {

/// payonce-sim on its own (not an agent's child): the deployment where one simulated
/// platform outlives the agents it serves. It makes a merchant key pair and an APIv3 key
/// for the test, and weChatConfig() gives the agent configuration that trusts this
/// simulator (its platform key written to a file) and signs with that merchant key.
class SimProcess {
public:
    static std::unique_ptr<SimProcess> start(QString *error);
    ~SimProcess();

    int port() const { return m_port; }
    QString baseUrl() const;
    /// The agent's "wechat" config object for this simulator (apiv3_key included).
    QJsonObject weChatConfig() const;
    bool stop();

private:
    SimProcess() = default;
    QTemporaryDir m_dir;
    QProcess m_process;
    int m_port = 0;
    QByteArray m_apiv3Key;
};

} // namespace payonce::testsupport
