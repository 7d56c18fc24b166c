#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace payonce::testsupport {

/// payonce-sim on its own (not an agent's child): the deployment where one simulated
/// platform outlives the agents it serves, and the simulator suites' subject. By default it
/// makes a merchant key pair and an APIv3 key for the test, and weChatConfig() gives the
/// agent configuration that trusts this simulator (its platform key written to a file) and
/// signs with that merchant key.
class SimProcess {
public:
    struct Options {
        /// The merchant public key the simulator verifies requests with; empty: a key pair
        /// is made for this simulator (weChatConfig() names its private half).
        QString merchantPublicKey;
        QString mchId = QStringLiteral("1900000001");
        QString appId = QStringLiteral("wx0000000000000000");
        QString alipayAppId = QStringLiteral("2021000000000000");
        /// Empty: not passed, the simulator's own.
        QString alipaySellerId = QStringLiteral("2088000000000000");
        QString platformSerial = QStringLiteral("PAYONCE_SIM_0001");
        /// Given to the simulator as PAYONCE_WECHAT_APIV3_KEY; empty: 32 random letters.
        QByteArray apiv3Key;
    };

    /// Started and listening (its platform key written), or null with *error saying why.
    static std::unique_ptr<SimProcess> start(const Options &options, QString *error);
    static std::unique_ptr<SimProcess> start(QString *error) { return start(Options{}, error); }
    ~SimProcess();

    int port() const { return m_port; }
    QString baseUrl() const;
    /// The file the simulator wrote its platform public key to, and that key.
    QString platformKeyPath() const;
    QByteArray platformKeyPem() const;
    /// The agent's "wechat" config object for this simulator (apiv3_key included).
    QJsonObject weChatConfig() const;
    /// One call to the simulator's control API (/sim/…): the answer's JSON object; a warning
    /// naming the call when no answer came (the object is then empty).
    QJsonObject control(const QByteArray &method, const QString &path, const QJsonObject &body = {}) const;
    /// SIGTERM, then waits: true when it ended by itself with exit code 0 (killed otherwise).
    bool stop();

private:
    SimProcess() = default;
    QTemporaryDir m_dir;
    QProcess m_process;
    int m_port = 0;
    QString m_merchantId;
    QString m_appId;
    QString m_platformSerial;
    QByteArray m_apiv3Key;
};

} // namespace payonce::testsupport
