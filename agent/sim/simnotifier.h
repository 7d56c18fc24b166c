#pragma once

#include "crypto/rsakeys.h"
#include "httppost.h"
#include "simoptions.h"
#include "simstate.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QStringList>

#include <memory>

class QTimer;

namespace payonce::sim {

/// The platforms' payment notifications (docs/design.md, "The simulated platform"). Attached to
/// SimState::tradePaid: for every trade that becomes paid it builds the notification
/// exactly as the platform does and POSTs it to the trade's notify_url plus the extra
/// callback targets of its channel, re-delivering on the platform's schedule until one
/// delivery is acknowledged:
///
/// - WeChat Pay v3: JSON {id, create_time, resource_type "encrypt-resource", event_type
///   "TRANSACTION.SUCCESS", summary, resource{original_type "transaction", algorithm
///   "AEAD_AES_256_GCM", ciphertext, associated_data "transaction", nonce}}, the resource
///   being the transaction JSON encrypted with AES-256-GCM under the APIv3 key; headers
///   Wechatpay-Timestamp/-Nonce/-Signature/-Serial/-Signature-Type, the signature
///   SHA256withRSA by the platform key over "timestamp\nnonce\nbody\n". Acknowledged by
///   200 or 204 whose body is empty or JSON with code "SUCCESS". Intervals between
///   attempts: 15s 15s 30s 3m 10m 20m 30m 30m 30m 60m 3h 3h 3h 6h 6h (16 attempts).
/// - Alipay: application/x-www-form-urlencoded trade_status_sync, sign = RSA2 by the
///   platform key over the sorted k=v pairs without sign and sign_type. Acknowledged by
///   status 200 with the body exactly "success". Intervals: 4m 10m 10m 1h 2h 6h 15h
///   (8 attempts).
///
/// Each attempt re-signs (fresh timestamp and nonce / notify_time); the body of a WeChat
/// notification (its id, its ciphertext) is the same in every attempt, as is Alipay's
/// notify_id. The next attempt is scheduled when every copy of the previous one has an
/// outcome: interval × time_scale later. FAIL, any other status, a timeout, a refused or
/// reset connection are "not acknowledged". After the last attempt the notification gives
/// up (recorded). A redelivery (QA's "gateway replays") sends the last attempt's exact
/// bytes again, once, outside the schedule. The `duplicate` fault of the channel sends N
/// identical copies of each delivery at once, each over its own connection.
///
/// Refund notifications (SimState::refundFinished), on the same schedules and
/// acknowledgement rules, to the refund's notify_url (Alipay: the trade's when the refund
/// request named none); the extra callback targets are for payments only:
/// - WeChat Pay v3: event_type REFUND.SUCCESS / REFUND.ABNORMAL / REFUND.CLOSED, resource
///   {original_type "refund", associated_data "refund"} sealing {mchid, out_trade_no,
///   transaction_id, out_refund_no, refund_id, refund_status, success_time,
///   user_received_account, amount{total, refund, payer_total, payer_refund}}, signed as
///   payment notifications are;
/// - Alipay: trade_status_sync of the trade with the refund's fields — out_biz_no (the
///   out_request_no), refund_fee (the trade's total refunded so far), gmt_refund, and
///   trade_status TRADE_CLOSED once fully refunded, else TRADE_SUCCESS — signed RSA2.
///   Alipay refunds fail synchronously, so only successful refunds are notified.
///
/// Lives on the main thread, like SimState; all network I/O is asynchronous.
class SimNotifier : public QObject {
    Q_OBJECT
public:
    SimNotifier(const SimOptions &options, crypto::PrivateKey platformKey, SimState *state, QObject *parent = nullptr);
    ~SimNotifier() override;

    /// Intervals between attempts, in seconds (the platform's documented schedule).
    static QList<qint64> retryScheduleSeconds(core::Channel channel);

    double timeScale() const { return m_timeScale; }
    /// Also re-times the attempts already waiting (from the end of their previous attempt).
    void setTimeScale(double scale);
    int timeoutMs() const { return m_timeoutMs; }
    void setTimeoutMs(int ms) { m_timeoutMs = ms; }

    /// Extra callback URLs, per channel; "{channel}" in a URL becomes wechat / alipay.
    void setExtraTargets(core::Channel channel, const QStringList &urls) { m_extraTargets.insert(channel, urls); }
    QStringList extraTargets(core::Channel channel) const { return m_extraTargets.value(channel); }

    /// Sends the last attempt of every notification of outTradeNo (its payment and its
    /// refunds) again now (false when there is none). Does not change the schedule; an
    /// acknowledgement stops it.
    bool redeliver(const QString &outTradeNo);

    QJsonArray notificationsJson(const QString &outTradeNo = {}) const;

    /// Forgets every notification (aborting deliveries in flight) and the extra targets;
    /// the time scale and timeout return to their start-up values.
    void reset();

    void onTradePaid(const payonce::sim::SimTrade &trade);
    void onRefundFinished(const payonce::sim::SimRefund &refund, const payonce::sim::SimTrade &trade);

private:
    struct Notification;
    struct Round;

    void startAttempt(const std::shared_ptr<Notification> &n);
    void sendRound(const std::shared_ptr<Notification> &n, const QList<OutgoingPost> &posts, bool scheduled);
    void roundFinished(const std::shared_ptr<Notification> &n, bool scheduled);
    void schedule(const std::shared_ptr<Notification> &n);
    QList<OutgoingPost> buildPosts(Notification &n, QString *error);
    void start(const std::shared_ptr<Notification> &n);
    QByteArray wechatBody(const SimTrade &trade, QString *error) const;
    QByteArray wechatRefundBody(const SimRefund &refund, const SimTrade &trade, QString *error) const;
    QByteArray wechatEnvelope(const QJsonObject &resource, QByteArrayView kind, QByteArrayView eventType,
                              const QString &summary, QString *error) const;
    bool acknowledged(core::Channel channel, const PostResult &result) const;

    SimOptions m_options;
    crypto::PrivateKey m_platformKey;
    SimState *m_state;
    double m_timeScale;
    int m_timeoutMs = 5000;
    QHash<core::Channel, QStringList> m_extraTargets;
    // "<channel>/<out_trade_no>" for payments, "<channel>/refund/<out_refund_no>" for refunds
    QHash<QString, std::shared_ptr<Notification>> m_notifications;
};

} // namespace payonce::sim
