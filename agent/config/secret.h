#pragma once

#include <QString>

namespace payonce::config {

/// A configuration value that must never reach a log line: the WeChat APIv3 key, an API
/// token's SHA-256. There is deliberately no implicit conversion and no QDebug operator;
/// reading the value takes an explicit reveal(), which is easy to find in review.
class Secret {
public:
    Secret() = default;
    explicit Secret(QString value) : m_value(std::move(value)) {}

    const QString &reveal() const { return m_value; }
    bool isEmpty() const { return m_value.isEmpty(); }
    qsizetype size() const { return m_value.size(); }

    bool operator==(const Secret &) const = default;

private:
    QString m_value;
};

} // namespace payonce::config
