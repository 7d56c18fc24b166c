#include "simserver.h"
#include "simjson_p.h"

#include "crypto/securerandom.h"
#include "platform/alipay.h"
#include "platform/wechatpay.h"
#include "shared/money.h"

#include <QDateTime>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTimer>

namespace payonce::sim {

using core::Channel;
using namespace payonce::platform;

SimServer::SimServer(SimOptions options, crypto::PrivateKey platformKey, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_platformKey(std::move(platformKey)),
      m_notifier(m_options, m_platformKey, &m_state)
{
    auto pem = m_platformKey.publicKey().toPem();
    if (pem)
        m_platformPublicPem = *pem;
    routeWeChat();
    routeAlipay();
    routeControl();
    routeNotifications();
}

SimServer::~SimServer()
{
    shutdown();
}

quint16 SimServer::listen()
{
    return m_server.listen(m_options.address, m_options.port);
}

void SimServer::shutdown()
{
    m_parked.clear();
    m_notifier.reset();
}

// ---- delivery and faults -------------------------------------------------------------

void SimServer::write(QHttpServerResponder &responder, const Answer &answer)
{
    responder.writeStatusLine(static_cast<QHttpServerResponder::StatusCode>(answer.status));
    for (const auto &[name, value] : answer.headers)
        responder.writeHeader(name, value);
    responder.writeHeader("Content-Length", QByteArray::number(answer.body.size()));
    responder.writeBody(answer.body);
}

bool SimServer::injectError(Channel channel, const QString &endpoint, const ResponderPtr &responder)
{
    m_state.countRequest(endpoint);
    const SimFaults faults = m_state.faults(channel);
    if (faults.errorRate <= 0.0 || QRandomGenerator::global()->generateDouble() >= faults.errorRate)
        return false;
    Answer answer;
    if (channel == Channel::WeChat) {
        answer = wechatError(faults.errorStatus, QStringLiteral("SYSTEM_ERROR"),
                             QStringLiteral("simulated system error"));
    } else if (faults.errorStatus == 200) {
        // Alipay reports its own failures inside a 200: code 20000.
        const QByteArray method = endpoint.toLatin1(); // Alipay endpoints are named by their method
        answer = alipayAnswer(method, {{QStringLiteral("code"), QStringLiteral("20000")},
                                       {QStringLiteral("msg"), QStringLiteral("Service Currently Unavailable")},
                                       {QStringLiteral("sub_code"), QStringLiteral("isp.unknow-error")},
                                       {QStringLiteral("sub_msg"), QStringLiteral("simulated system error")}});
    } else {
        answer.status = faults.errorStatus;
        answer.headers = {{"Content-Type", "text/plain"}};
        answer.body = "simulated error";
    }
    deliver(channel, endpoint, responder, std::move(answer));
    return true;
}

void SimServer::deliver(Channel channel, const QString &endpoint, const ResponderPtr &responder, Answer answer)
{
    const SimFaults faults = m_state.faults(channel);
    if (faults.replayLast && m_lastAnswers.contains(endpoint))
        answer = m_lastAnswers.value(endpoint);
    else
        m_lastAnswers.insert(endpoint, answer);

    QTcpSocket *socket = responder->socket();
    if (faults.hang) {
        // Never answer; forget the responder when the client gives up.
        m_parked.insert(socket, responder);
        connect(socket, &QAbstractSocket::disconnected, this, [this, socket] { m_parked.remove(socket); });
        connect(socket, &QObject::destroyed, this, [this, socket] { m_parked.remove(socket); });
        return;
    }
    if (faults.latencyMs > 0) {
        // Bound to the socket: if the client disconnects first, nothing is written.
        QTimer::singleShot(faults.latencyMs, socket, [responder, answer] { write(*responder, answer); });
        return;
    }
    write(*responder, answer);
}

} // namespace payonce::sim
