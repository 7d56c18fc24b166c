#pragma once

#include "config.h"
#include "configsetting_p.h"

#include "core/common/result.h"

#include <QHash>

namespace payonce::config {

/// Turns the layered settings into a Config, checking each value, one area at a time. Every
/// error names the source of the bad value (the file and key, the variable or the flag).
class ConfigBuilder {
public:
    explicit ConfigBuilder(const QHash<QString, Setting> &settings) : m_settings(settings) {}

    core::Result<Config> build();

private:
    // The areas, in the order a config file lists them.
    core::Result<void> storage(Config &c) const;
    core::Result<void> redisTopology(Config &c) const;
    core::Result<void> logging(Config &c) const;
    core::Result<void> limits(Config &c) const;
    core::Result<void> httpAndOutbox(Config &c) const;
    core::Result<void> identity(Config &c) const;
    core::Result<void> authTokens(Config &c) const;
    core::Result<void> wechat(Config &c) const;
    core::Result<void> alipay(Config &c) const;
    core::Result<void> simAndQa(Config &c) const;

    // Typed reads of one key: absent leaves out as it is; a bad value is an error naming it.
    core::Result<void> hostPort(const QString &key, HostPort &out) const;
    core::Result<void> integer(const QString &key, int &out, int min, int max) const;
    void string(const QString &key, QString &out) const;
    core::Result<void> existingFile(const QString &key, QString &out) const;
    core::Result<void> httpUrl(const QString &key, QString &out) const;
    /// The list at key, each entry parsed as host:port (defaultPort when it has none).
    core::Result<void> hostPortList(const QString &key, int defaultPort, QList<HostPort> &out) const;

    const Setting *find(const QString &key) const;
    QString originOf(const QString &key) const;
    core::Error badValue(const QString &key, const QString &detail) const;

    const QHash<QString, Setting> &m_settings;
};

} // namespace payonce::config
