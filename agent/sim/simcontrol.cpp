// The simulator's control API (/sim/...) and its notifications' routes.
#include "simjson_p.h"
#include "simserver.h"

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

namespace {

void writeJson(const std::shared_ptr<QHttpServerResponder> &r, const QJsonObject &o, int status = 200)
{
    r->write(QJsonDocument(o), static_cast<QHttpServerResponder::StatusCode>(status));
}

void writeError(const std::shared_ptr<QHttpServerResponder> &r, int status, const QString &message)
{
    writeJson(r, {{QStringLiteral("error"), message}}, status);
}

} // namespace

bool SimServer::controlAllowed(const QHttpServerRequest &request, const ResponderPtr &responder)
{
    if (request.remoteAddress().isLoopback())
        return true;
    responder->write(QJsonDocument(QJsonObject{
                         {QStringLiteral("error"), QStringLiteral("the control API answers loopback clients only")}}),
                     QHttpServerResponder::StatusCode::Forbidden);
    return false;
}

void SimServer::routeControl()
{
    routePay();
    routeFaults();
    routeTradesAndReset();
}

/// POST /sim/pay: the payer pays a trade (its notifications follow).
void SimServer::routePay()
{
    m_server.route(QStringLiteral("/sim/pay"), QHttpServerRequest::Method::Post,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
                       const auto channel = core::channelFromName(body.value(u"channel").toString());
                       const QString outTradeNo = body.value(u"out_trade_no").toString();
                       if (!channel || outTradeNo.isEmpty())
                           return writeError(r, 400,
                                             QStringLiteral("channel (wechat|alipay) and out_trade_no are required"));
                       SimTrade trade;
                       switch (m_state.pay(*channel, outTradeNo, &trade)) {
                       case SimState::PayOutcome::Paid:
                       case SimState::PayOutcome::AlreadyPaid:
                           return writeJson(r, tradeJson(trade, m_state.refundsOf(trade)));
                       case SimState::PayOutcome::NotFound: return writeError(r, 404, QStringLiteral("no such trade"));
                       case SimState::PayOutcome::Closed:
                           return writeError(r, 409, QStringLiteral("the trade is closed"));
                       }
                   });
}

/// The faults injected per channel (POST, GET) and the requests counted.
void SimServer::routeFaults()
{
    m_server.route(
        QStringLiteral("/sim/faults"), QHttpServerRequest::Method::Post,
        [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
            if (!controlAllowed(request, r))
                return;
            const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
            const QString name = body.value(u"channel").toString(QStringLiteral("all"));
            QList<Channel> channels;
            if (name == u"all")
                channels = {Channel::WeChat, Channel::Alipay};
            else if (auto c = core::channelFromName(name))
                channels = {*c};
            else
                return writeError(r, 400, QStringLiteral("channel must be wechat, alipay or all"));
            SimFaults f;
            f.latencyMs = body.value(u"latency_ms").toInt(0);
            f.errorRate = body.value(u"error_rate").toDouble(0.0);
            f.errorStatus = body.value(u"error_status").toInt(500);
            f.hang = body.value(u"hang").toBool(false);
            f.tamperResponses = body.value(u"tamper_responses").toBool(false);
            f.replayLast = body.value(u"replay_last").toBool(false);
            f.duplicate = body.value(u"duplicate").toInt(1);
            f.refundFail = body.value(u"refund_fail").toBool(false);
            if (f.latencyMs < 0 || f.errorRate < 0.0 || f.errorRate > 1.0 || f.errorStatus < 200 || f.errorStatus > 599
                || f.duplicate < 1 || f.duplicate > 1000)
                return writeError(
                    r, 400,
                    QStringLiteral(
                        "latency_ms >= 0, error_rate in [0,1], error_status in 200..599, duplicate in 1..1000"));
            QJsonObject out;
            for (Channel c : channels) {
                m_state.setFaults(c, f);
                out.insert(core::channelName(c), faultsJson(f));
            }
            writeJson(r, out);
        });

    m_server.route(QStringLiteral("/sim/faults"), QHttpServerRequest::Method::Get,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       QJsonObject out;
                       for (Channel c : core::allChannels)
                           out.insert(core::channelName(c), faultsJson(m_state.faults(c)));
                       writeJson(r, out);
                   });

    m_server.route(QStringLiteral("/sim/stats"), QHttpServerRequest::Method::Get,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       QJsonObject created, failures, requests, refundCalls, refundsCreated, refundedFen;
                       for (Channel c : core::allChannels) {
                           created.insert(core::channelName(c), m_state.ordersCreated(c));
                           failures.insert(core::channelName(c), m_state.signatureFailures(c));
                           refundCalls.insert(core::channelName(c), m_state.refundCalls(c));
                           refundsCreated.insert(core::channelName(c), m_state.refundsCreated(c));
                           refundedFen.insert(core::channelName(c), m_state.refundedFen(c));
                       }
                       const auto counts = m_state.requests();
                       for (auto it = counts.cbegin(); it != counts.cend(); ++it)
                           requests.insert(it.key(), it.value());
                       writeJson(r, {{QStringLiteral("orders_created"), created},
                                     {QStringLiteral("requests"), requests},
                                     {QStringLiteral("signature_failures"), failures},
                                     {QStringLiteral("refund_calls"), refundCalls},
                                     {QStringLiteral("refunds_created"), refundsCreated},
                                     {QStringLiteral("refunded_fen"), refundedFen}});
                   });
}

/// GET /sim/trades/<out_trade_no>, the platform key, POST /sim/reset.
void SimServer::routeTradesAndReset()
{
    m_server.route(
        QStringLiteral("/sim/trades/<arg>"), QHttpServerRequest::Method::Get,
        [this](const QString &outTradeNo, const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
            if (!controlAllowed(request, r))
                return;
            const QList<SimTrade> trades = m_state.findAll(outTradeNo);
            if (trades.isEmpty())
                return writeError(r, 404, QStringLiteral("no such trade"));
            QJsonArray list;
            for (const SimTrade &t : trades)
                list.append(tradeJson(t, m_state.refundsOf(t)));
            writeJson(r, {{QStringLiteral("trades"), list}});
        });

    m_server.route(QStringLiteral("/sim/platform-key"), QHttpServerRequest::Method::Get,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       writeJson(r, {{QStringLiteral("serial"), m_options.platformSerial},
                                     {QStringLiteral("public_key_pem"), QString::fromLatin1(m_platformPublicPem)}});
                   });

    m_server.route(QStringLiteral("/sim/reset"), QHttpServerRequest::Method::Post,
                   [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       m_state.reset();
                       m_notifier.reset();
                       m_lastAnswers.clear();
                       m_parked.clear();
                       writeJson(r, {{QStringLiteral("reset"), true}});
                   });
}

// ---- notifications (simnotifier.h) --------------------------------------------------

void SimServer::routeNotifications()
{
    routeNotificationLog();
    routeNotificationTargets();
}

/// The notifications sent, one trade's, and a redelivery.
void SimServer::routeNotificationLog()
{
    auto listing = [this](const QString &outTradeNo) {
        return QJsonObject{{QStringLiteral("notifications"), m_notifier.notificationsJson(outTradeNo)},
                           {QStringLiteral("time_scale"), m_notifier.timeScale()},
                           {QStringLiteral("timeout_ms"), m_notifier.timeoutMs()}};
    };

    m_server.route(QStringLiteral("/sim/notifications"), QHttpServerRequest::Method::Get,
                   [this, listing](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       writeJson(r, listing({}));
                   });
    m_server.route(QStringLiteral("/sim/notifications/<arg>"), QHttpServerRequest::Method::Get,
                   [this, listing](const QString &outTradeNo, const QHttpServerRequest &request,
                                   QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       writeJson(r, listing(outTradeNo));
                   });
    m_server.route(QStringLiteral("/sim/notifications/<arg>/redeliver"), QHttpServerRequest::Method::Post,
                   [this, listing](const QString &outTradeNo, const QHttpServerRequest &request,
                                   QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       if (!m_notifier.redeliver(outTradeNo))
                           return writeError(r, 404,
                                             QStringLiteral("no notification of that out_trade_no has been sent"));
                       writeJson(r, listing(outTradeNo));
                   });
}

/// Extra callback targets (QA's) and the notifier's pace.
void SimServer::routeNotificationTargets()
{
    auto targetsJson = [this] {
        QJsonObject out;
        for (Channel c : core::allChannels)
            out.insert(core::channelName(c), QJsonArray::fromStringList(m_notifier.extraTargets(c)));
        return out;
    };
    m_server.route(QStringLiteral("/sim/callback-targets"), QHttpServerRequest::Method::Post,
                   [this, targetsJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
                       const QString name = body.value(u"channel").toString(QStringLiteral("all"));
                       QList<Channel> channels;
                       if (name == u"all")
                           channels = {Channel::WeChat, Channel::Alipay};
                       else if (auto c = core::channelFromName(name))
                           channels = {*c};
                       else
                           return writeError(r, 400, QStringLiteral("channel must be wechat, alipay or all"));
                       if (!body.value(u"urls").isArray())
                           return writeError(r, 400, QStringLiteral("urls must be an array of http:// URLs"));
                       QStringList urls;
                       for (const QJsonValue &v : body.value(u"urls").toArray()) {
                           const QUrl url(v.toString());
                           if (!url.isValid() || url.scheme() != u"http" || url.host().isEmpty())
                               return writeError(r, 400,
                                                 QStringLiteral("not an http:// URL: \"%1\"").arg(v.toString()));
                           urls.append(v.toString());
                       }
                       for (Channel c : channels)
                           m_notifier.setExtraTargets(c, urls);
                       writeJson(r, targetsJson());
                   });
    m_server.route(QStringLiteral("/sim/callback-targets"), QHttpServerRequest::Method::Get,
                   [this, targetsJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       writeJson(r, targetsJson());
                   });

    auto configJson = [this] {
        return QJsonObject{{QStringLiteral("time_scale"), m_notifier.timeScale()},
                           {QStringLiteral("timeout_ms"), m_notifier.timeoutMs()}};
    };
    m_server.route(QStringLiteral("/sim/notify-config"), QHttpServerRequest::Method::Post,
                   [this, configJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
                       const double scale = body.value(u"time_scale").toDouble(m_notifier.timeScale());
                       const int timeout = body.value(u"timeout_ms").toInt(m_notifier.timeoutMs());
                       if (!(scale > 0.0) || scale > 1000.0 || timeout < 1 || timeout > 600000)
                           return writeError(r, 400,
                                             QStringLiteral("time_scale in (0, 1000], timeout_ms in 1..600000"));
                       m_notifier.setTimeoutMs(timeout);
                       m_notifier.setTimeScale(scale);
                       writeJson(r, configJson());
                   });
    m_server.route(QStringLiteral("/sim/notify-config"), QHttpServerRequest::Method::Get,
                   [this, configJson](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                       auto r = std::make_shared<QHttpServerResponder>(std::move(responder));
                       if (!controlAllowed(request, r))
                           return;
                       writeJson(r, configJson());
                   });
}

} // namespace payonce::sim
