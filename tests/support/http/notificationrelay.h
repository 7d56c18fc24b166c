#pragma once

#include "receivedrequest.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QTcpServer>

namespace payonce::testsupport {

/// One HTTP request as the relay received it.
using CapturedRequest = ReceivedRequest;

/// Where the platform believes the agent is (the agent's public_base_url): keeps every
/// notification and answers FAIL (WeChat 500, Alipay "failure"), as an agent that never
/// got it would look — the lost callback, to be sent late with replayOf(). Lives on the
/// test's thread; captured grows while that thread's event loop runs.
class NotificationRelay {
public:
    NotificationRelay();
    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()); }
    QList<CapturedRequest> captured;

private:
    void accept(QTcpSocket *socket);

    QTcpServer m_server;
};

/// The captured request as the platform would send it to the agent itself.
QByteArray replayOf(const CapturedRequest &request);

} // namespace payonce::testsupport
