#pragma once

#include "crypto/rsakeys.h"
#include "platform/alipay.h"
#include "simnotifier.h"
#include "simoptions.h"
#include "simstate.h"

#include <QHash>
#include <QHttpServer>
#include <QJsonObject>
#include <QObject>

#include <memory>

class QHttpServerRequest;
class QHttpServerResponder;
class QTcpSocket;

namespace payonce::sim {

/// The simulated platforms on one QHttpServer, all answered on the main thread's event
/// loop (every handler is in-memory and quick; latency and hang faults use timers and
/// parked responders, never a blocking wait).
///
/// WeChat Pay v3 (requests must carry a valid merchant v3 signature, else 401 SIGN_ERROR;
/// every answer carries Wechatpay-Timestamp/Nonce/Signature/Serial by the platform key):
///   POST /v3/pay/transactions/native                           → 200 {"code_url"}
///   GET  /v3/pay/transactions/out-trade-no/{no}?mchid=...      → 200 trade | 404 ORDER_NOT_EXIST
///   POST /v3/pay/transactions/out-trade-no/{no}/close          → 204 | 404 | 400 ORDERPAID
///   POST /v3/refund/domestic/refunds {transaction_id|out_trade_no, out_refund_no,
///        amount{refund,total,currency}, reason, notify_url}   → 200 refund, status PROCESSING
///        (then at once SUCCESS — or ABNORMAL under refund_fail — and the notification);
///        the same out_refund_no again → 200 that refund, nothing refunded | 404
///        RESOURCE_NOT_EXISTS (no such trade) | 400 INVALID_REQUEST (over-refund: the
///        refunds would exceed the amount paid; trade not paid; amount.total not the
///        trade's; out_refund_no reused with other parameters) | 400 PARAM_ERROR
///   GET  /v3/refund/domestic/refunds/{out_refund_no}          → 200 refund | 404 RESOURCE_NOT_EXISTS
///   A trade with refunds queries as trade_state REFUND.
/// Alipay (form POST, RSA2 request signature checked, else 40002 isv.invalid-signature;
/// every answer framed {"<method>_response":{...},"sign":"..."}):
///   POST /gateway.do  method=alipay.trade.precreate | alipay.trade.query | alipay.trade.close
///                     | alipay.trade.refund | alipay.trade.fastpay.refund.query
///   alipay.trade.refund {out_trade_no|trade_no, refund_amount "9.90", out_request_no
///   (default out_trade_no), refund_reason} refunds synchronously: 10000 with fund_change
///   "Y" and refund_fee = the trade's total refunded; the same out_request_no again →
///   10000 fund_change "N", nothing refunded; ACQ.TRADE_NOT_EXIST, ACQ.TRADE_STATUS_ERROR
///   (not paid), ACQ.REFUND_AMT_NOT_EQUAL_TOTAL (over-refund), ACQ.CONTEXT_INCONSISTENT
///   (out_request_no reused with another amount), ACQ.SELLER_BALANCE_NOT_ENOUGH
///   (refund_fail). alipay.trade.fastpay.refund.query {out_trade_no, out_request_no} →
///   10000 with refund_amount and refund_status REFUND_SUCCESS, or an empty 10000 when no
///   such refund. A fully refunded trade queries as TRADE_CLOSED.
/// Creating an out_trade_no again returns the same code_url / qr_code and creates nothing.
///
/// Control (loopback clients only, else 403; plain JSON):
///   POST /sim/pay {"channel","out_trade_no"}  → the paid trade (transaction_id as pay_no)
///   POST /sim/faults {"channel":"wechat|alipay|all","latency_ms","error_rate",
///                     "error_status","hang","tamper_responses","replay_last","duplicate",
///                     "refund_fail"}
///        (replaces that channel's faults; omitted fields take their defaults; duplicate
///        = N identical concurrent copies of every notification delivery, 1..1000;
///        refund_fail = new refunds fail: WeChat answers PROCESSING and the refund ends
///        ABNORMAL with a REFUND.ABNORMAL notification, Alipay refuses it with
///        ACQ.SELLER_BALANCE_NOT_ENOUGH; either way nothing is refunded)
/// Notifications (simnotifier.h):
///   GET  /sim/notifications[/{out_trade_no}] → {"notifications":[{kind payment|refund,
///        channel, out_trade_no, pay_no, (refunds: out_refund_no, refund_state),
///        state retrying|acknowledged|gave_up, attempts, max_attempts,
///        redeliveries, deliveries, acknowledged, gave_up, last_status, last_outcome,
///        last_attempt_at, next_attempt_at, targets:[{url, deliveries, last_status,
///        last_outcome, acknowledged}], history:[...]}], "time_scale", "timeout_ms"}
///   POST /sim/notifications/{out_trade_no}/redeliver → the last attempt's exact bytes
///        of every notification of the trade (payment and refunds) once more, now (404
///        when nothing was sent yet)
///   POST /sim/callback-targets {"channel":"wechat|alipay|all","urls":[...]} extra URLs
///        (besides the trade's notify_url) for notifications of trades paid from now on;
///        "{channel}" in a URL becomes the channel's name. GET returns them.
///   POST /sim/notify-config {"time_scale":0.001,"timeout_ms":5000}; GET returns them.
///   GET  /sim/faults, GET /sim/stats ({orders_created, requests, signature_failures,
///        refund_calls: verified refund requests, refunds_created: new out_refund_nos,
///        refunded_fen: money refunded — each per channel}),
///   GET  /sim/trades/{out_trade_no} ({"trades":[{..., traceparent (of the create request,
///        as received; its notifications continue that trace), refunded_fen, refunds:[{out_refund_no,
///        refund_id, amount_fen, state PROCESSING|SUCCESS|ABNORMAL, reason, notify_url,
///        created_at, finished_at}]}]}),
///   GET  /sim/platform-key {"serial","public_key_pem"}, POST /sim/reset (also forgets
///   notifications and callback targets, and restores the start-up notify config)
class SimServer : public QObject {
    Q_OBJECT
public:
    SimServer(SimOptions options, crypto::PrivateKey platformKey, QObject *parent = nullptr);
    ~SimServer() override;

    /// Binds options.address:options.port; the port bound (0 on failure).
    quint16 listen();
    QByteArray platformPublicKeyPem() const { return m_platformPublicPem; }
    SimState &state() { return m_state; }
    SimNotifier &notifier() { return m_notifier; }
    /// Drops parked (hung) requests; call before the event loop ends.
    void shutdown();

private:
    struct Answer {
        int status = 200;
        QList<QPair<QByteArray, QByteArray>> headers;
        QByteArray body;
    };
    using ResponderPtr = std::shared_ptr<QHttpServerResponder>;

    void routeWeChat();
    void routeAlipay();
    void routeControl();
    void routePay();
    void routeFaults();
    void routeTradesAndReset();
    void routeNotifications();
    void routeNotificationLog();
    void routeNotificationTargets();

    Answer wechatAnswer(int status, const QByteArray &body);
    Answer wechatError(int status, const QString &code, const QString &message);
    std::optional<Answer> wechatCheckSignature(const QHttpServerRequest &request);
    void wechatNative(const QHttpServerRequest &request, ResponderPtr responder);
    void wechatQuery(const QString &outTradeNo, const QHttpServerRequest &request, ResponderPtr responder);
    void wechatClose(const QString &outTradeNo, const QHttpServerRequest &request, ResponderPtr responder);
    void wechatRefund(const QHttpServerRequest &request, ResponderPtr responder);
    void wechatRefundQuery(const QString &outRefundNo, const QHttpServerRequest &request, ResponderPtr responder);

    /// One call to the Alipay gateway, as far as it has been checked.
    struct AlipayCall {
        QByteArray method;
        QString endpoint; ///< the method, for the fault counters
        platform::alipay::Params params;
        QJsonObject biz; ///< biz_content, once the signature verified
        QString outTradeNo;
        QByteArray traceParent;
        ResponderPtr responder;
    };
    Answer alipayAnswer(const QByteArray &method, const QJsonObject &response);
    void alipayGateway(const QHttpServerRequest &request, ResponderPtr responder);
    void alipayPrecreate(const AlipayCall &call);
    void alipayQuery(const AlipayCall &call);
    void alipayClose(const AlipayCall &call);
    /// An Alipay error answer: code/msg with sub_code/sub_msg.
    void alipayRefuse(const AlipayCall &call, const QString &code, const QString &msg, const QString &subCode,
                      const QString &subMsg);
    /// 40004 "Business Failed" with sub_code/sub_msg.
    void alipayBusinessError(const AlipayCall &call, const QString &subCode, const QString &subMsg);
    /// alipay.trade.refund and alipay.trade.fastpay.refund.query (biz already verified).
    void alipayRefund(const AlipayCall &call);
    void alipayRefundQuery(const AlipayCall &call, const QString &outTradeNo, const QString &tradeNo,
                           const QString &outRequestNo);
    void alipayRefundCreate(const AlipayCall &call, const QString &outTradeNo, const QString &tradeNo,
                            const QString &outRequestNo);
    /// code 10000 "Success" with fields.
    void alipaySucceed(const AlipayCall &call, const QJsonObject &fields);

    /// Counts the request and, when the channel's error_rate says so, answers the injected
    /// error and returns true.
    bool injectError(core::Channel channel, const QString &endpoint, const ResponderPtr &responder);
    /// Applies replay, latency and hang, then writes.
    void deliver(core::Channel channel, const QString &endpoint, const ResponderPtr &responder, Answer answer);
    static void write(QHttpServerResponder &responder, const Answer &answer);
    bool controlAllowed(const QHttpServerRequest &request, const ResponderPtr &responder);

    SimOptions m_options;
    crypto::PrivateKey m_platformKey;
    QByteArray m_platformPublicPem;
    SimState m_state;
    SimNotifier m_notifier;
    QHttpServer m_server;
    QHash<QString, Answer> m_lastAnswers;
    QHash<QTcpSocket *, ResponderPtr> m_parked;
};

} // namespace payonce::sim
