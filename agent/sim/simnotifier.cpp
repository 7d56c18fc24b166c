#include "simnotifier.h"

#include "crypto/aesgcm.h"
#include "crypto/securerandom.h"
#include "platform/alipay.h"
#include "platform/wechatpay.h"
#include "shared/money.h"
#include "shared/tracecontext.h"

#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTimer>
#include <QUuid>

#include <climits>
#include <cmath>

namespace payonce::sim {

using core::Channel;
using namespace payonce::platform;

namespace {

QString randomToken(int length)
{
    auto nonce = crypto::nonceString(length);
    return nonce ? *nonce : QString(length, u'0');
}

QString randomDigits(int count)
{
    QString digits;
    for (int i = 0; i < count; ++i)
        digits += QChar(u'0' + QRandomGenerator::global()->bounded(10));
    return digits;
}

QString beijing(const QDateTime &t, bool rfc3339)
{
    const QDateTime local = t.toOffsetFromUtc(8 * 3600);
    return rfc3339 ? local.toString(Qt::ISODate) : local.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString iso(const QDateTime &t)
{
    return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString();
}

QString outcomeName(const PostResult &r, bool ack)
{
    switch (r.outcome) {
    case PostResult::Outcome::Completed:
        return ack ? QStringLiteral("acknowledged") : QStringLiteral("not_acknowledged");
    case PostResult::Outcome::TimedOut: return QStringLiteral("timeout");
    case PostResult::Outcome::Failed: return QStringLiteral("failed");
    }
    return {};
}

} // namespace

struct SimNotifier::Notification {
    SimTrade trade;
    std::optional<SimRefund> refund; // set for a refund notification
    QStringList targets;
    QByteArray wechatBody;     // the same in every attempt
    alipay::Params alipayBase; // everything but notify_time and sign
    int attempts = 0;          // scheduled attempts started
    int redeliveries = 0;
    int deliveries = 0; // POSTs with an outcome (copies and targets included)
    int acknowledgements = 0;
    bool acknowledged = false;
    bool gaveUp = false;
    QString error;
    int lastStatus = 0;
    QString lastOutcome;
    QString lastError;
    QDateTime createdAt, lastAttemptAt, roundEndedAt, nextAttemptAt, acknowledgedAt, gaveUpAt;
    qint64 nextIntervalSeconds = -1;
    QList<OutgoingPost> lastPosts;
    struct TargetState {
        int deliveries = 0;
        int lastStatus = 0;
        QString lastOutcome;
        bool acknowledged = false;
    };
    QHash<QString, TargetState> targetStates;
    QJsonArray history;
    std::unique_ptr<QObject> scope = std::make_unique<QObject>(); // owns sockets and the timer
    QTimer *timer = nullptr;
};

struct SimNotifier::Round {
    int pending = 0;
    QJsonArray results;
    QJsonObject entry;
};

SimNotifier::SimNotifier(const SimOptions &options, crypto::PrivateKey platformKey, SimState *state, QObject *parent)
    : QObject(parent), m_options(options), m_platformKey(std::move(platformKey)), m_state(state),
      m_timeScale(options.timeScale)
{
    connect(m_state, &SimState::tradePaid, this, &SimNotifier::onTradePaid);
    connect(m_state, &SimState::refundFinished, this, &SimNotifier::onRefundFinished);
}

SimNotifier::~SimNotifier()
{
    reset();
}

QList<qint64> SimNotifier::retryScheduleSeconds(Channel channel)
{
    constexpr qint64 m = 60, h = 3600;
    if (channel == Channel::WeChat)
        return {15, 15, 30, 3 * m, 10 * m, 20 * m, 30 * m, 30 * m, 30 * m, 60 * m, 3 * h, 3 * h, 3 * h, 6 * h, 6 * h};
    return {4 * m, 10 * m, 10 * m, 1 * h, 2 * h, 6 * h, 15 * h};
}

void SimNotifier::reset()
{
    for (const auto &n : std::as_const(m_notifications))
        n->scope.reset(); // aborts deliveries in flight; their callbacks never run
    m_notifications.clear();
    m_extraTargets.clear();
    m_timeScale = m_options.timeScale;
    m_timeoutMs = 5000;
}

void SimNotifier::onTradePaid(const SimTrade &trade)
{
    auto n = std::make_shared<Notification>();
    n->trade = trade;
    n->createdAt = QDateTime::currentDateTimeUtc();
    QStringList targets;
    if (!trade.notifyUrl.isEmpty())
        targets.append(trade.notifyUrl);
    for (QString url : m_extraTargets.value(trade.channel)) {
        url.replace(QStringLiteral("{channel}"), core::channelName(trade.channel));
        if (!targets.contains(url))
            targets.append(url);
    }
    n->targets = targets;
    m_notifications.insert(core::channelName(trade.channel) + u'/' + trade.outTradeNo, n);
    if (targets.isEmpty()) {
        n->error = QStringLiteral("no notify_url on the trade and no callback targets for the channel");
        n->gaveUp = true;
        return;
    }
    if (trade.channel == Channel::WeChat) {
        n->wechatBody = wechatBody(trade, &n->error);
    } else {
        const QByteArray amount = formatAmountFen(trade.amountFen).toLatin1();
        const QString appId = trade.appId.isEmpty() ? m_options.alipayAppId : trade.appId;
        const QByteArray fundBills = "[{\"amount\":\"" + amount + "\",\"fundChannel\":\"ALIPAYACCOUNT\"}]";
        n->alipayBase = {
            {"gmt_create", beijing(trade.createdAt, false).toUtf8()},
            {"charset", "utf-8"},
            {"gmt_payment", beijing(trade.paidAt, false).toUtf8()},
            {"subject", trade.description.toUtf8()},
            // Sent even when empty, as Alipay does (`body=`): it is part of the signed text.
            {"body", trade.body.toUtf8()},
            {"buyer_id", "2088" + randomDigits(12).toLatin1()},
            {"invoice_amount", amount},
            {"version", "1.0"},
            {"notify_id", (randomDigits(4) + randomToken(30).toLower()).toLatin1()},
            {"fund_bill_list", fundBills},
            {"notify_type", "trade_status_sync"},
            {"out_trade_no", trade.outTradeNo.toUtf8()},
            {"total_amount", amount},
            {"trade_status", "TRADE_SUCCESS"},
            {"trade_no", trade.payNo.toUtf8()},
            {"auth_app_id", appId.toUtf8()},
            {"receipt_amount", amount},
            {"point_amount", "0.00"},
            {"buyer_pay_amount", amount},
            {"app_id", appId.toUtf8()},
        };
        if (!m_options.alipaySellerId.isEmpty())
            n->alipayBase.append(qMakePair(QByteArray("seller_id"), m_options.alipaySellerId.toUtf8()));
    }
    start(n);
}

void SimNotifier::onRefundFinished(const SimRefund &refund, const SimTrade &trade)
{
    if (trade.channel == Channel::Alipay && refund.state != SimRefund::State::Success)
        return; // Alipay tells a failed refund in its answer only
    auto n = std::make_shared<Notification>();
    n->trade = trade;
    n->refund = refund;
    n->createdAt = QDateTime::currentDateTimeUtc();
    if (!refund.notifyUrl.isEmpty())
        n->targets = {refund.notifyUrl};
    m_notifications.insert(core::channelName(trade.channel) + QStringLiteral("/refund/") + refund.outRefundNo, n);
    if (n->targets.isEmpty()) {
        n->error = QStringLiteral("no notify_url on the refund");
        n->gaveUp = true;
        return;
    }
    if (trade.channel == Channel::WeChat) {
        n->wechatBody = wechatRefundBody(refund, trade, &n->error);
    } else {
        const QByteArray amount = formatAmountFen(trade.amountFen).toLatin1();
        const QString appId = trade.appId.isEmpty() ? m_options.alipayAppId : trade.appId;
        const bool fullyRefunded = trade.refundedFen >= trade.amountFen;
        n->alipayBase = {
            {"gmt_create", beijing(trade.createdAt, false).toUtf8()},
            {"charset", "utf-8"},
            {"gmt_payment", beijing(trade.paidAt, false).toUtf8()},
            {"gmt_refund", (beijing(refund.finishedAt, false) + QStringLiteral(".")
                            + QString::number(refund.finishedAt.time().msec() / 100))
                               .toUtf8()},
            {"subject", trade.description.toUtf8()},
            // Sent even when empty, as Alipay does (`body=`): it is part of the signed text.
            {"body", trade.body.toUtf8()},
            {"buyer_id", "2088" + randomDigits(12).toLatin1()},
            {"version", "1.0"},
            {"notify_id", (randomDigits(4) + randomToken(30).toLower()).toLatin1()},
            {"notify_type", "trade_status_sync"},
            {"out_trade_no", trade.outTradeNo.toUtf8()},
            {"out_biz_no", refund.outRefundNo.toUtf8()},
            {"total_amount", amount},
            {"receipt_amount", amount},
            {"buyer_pay_amount", amount},
            {"refund_fee", formatAmountFen(trade.refundedFen).toLatin1()},
            {"trade_status", fullyRefunded ? "TRADE_CLOSED" : "TRADE_SUCCESS"},
            {"trade_no", trade.payNo.toUtf8()},
            {"auth_app_id", appId.toUtf8()},
            {"app_id", appId.toUtf8()},
        };
        if (fullyRefunded)
            n->alipayBase.append(qMakePair(QByteArray("gmt_close"), beijing(refund.finishedAt, false).toUtf8()));
        if (!m_options.alipaySellerId.isEmpty())
            n->alipayBase.append(qMakePair(QByteArray("seller_id"), m_options.alipaySellerId.toUtf8()));
    }
    start(n);
}

void SimNotifier::start(const std::shared_ptr<Notification> &n)
{
    if (n->trade.channel == Channel::WeChat && n->wechatBody.isEmpty()) {
        n->gaveUp = true;
        return;
    }
    startAttempt(n);
}

QByteArray SimNotifier::wechatBody(const SimTrade &trade, QString *error) const
{
    const QJsonObject transaction{
        {QStringLiteral("mchid"), trade.merchantId.isEmpty() ? m_options.mchid : trade.merchantId},
        {QStringLiteral("appid"), trade.appId.isEmpty() ? m_options.appid : trade.appId},
        {QStringLiteral("out_trade_no"), trade.outTradeNo},
        {QStringLiteral("transaction_id"), trade.payNo},
        {QStringLiteral("trade_type"), QStringLiteral("NATIVE")},
        {QStringLiteral("trade_state"), QStringLiteral("SUCCESS")},
        {QStringLiteral("trade_state_desc"), QStringLiteral("支付成功")},
        {QStringLiteral("bank_type"), QStringLiteral("OTHERS")},
        {QStringLiteral("attach"), QString()},
        {QStringLiteral("success_time"), beijing(trade.paidAt, true)},
        {QStringLiteral("payer"),
         QJsonObject{{QStringLiteral("openid"), QString(QStringLiteral("oSIM") + randomToken(24))}}},
        {QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), trade.amountFen},
                                               {QStringLiteral("payer_total"), trade.amountFen},
                                               {QStringLiteral("currency"), QStringLiteral("CNY")},
                                               {QStringLiteral("payer_currency"), QStringLiteral("CNY")}}},
    };
    return wechatEnvelope(transaction, "transaction", "TRANSACTION.SUCCESS", QStringLiteral("支付成功"), error);
}

QByteArray SimNotifier::wechatRefundBody(const SimRefund &refund, const SimTrade &trade, QString *error) const
{
    QJsonObject resource{
        {QStringLiteral("mchid"), trade.merchantId.isEmpty() ? m_options.mchid : trade.merchantId},
        {QStringLiteral("out_trade_no"), trade.outTradeNo},
        {QStringLiteral("transaction_id"), trade.payNo},
        {QStringLiteral("out_refund_no"), refund.outRefundNo},
        {QStringLiteral("refund_id"), refund.refundId},
        {QStringLiteral("refund_status"), refundStateName(refund.state)},
        {QStringLiteral("user_received_account"), QStringLiteral("支付用户零钱")},
        {QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), trade.amountFen},
                                               {QStringLiteral("refund"), refund.amountFen},
                                               {QStringLiteral("payer_total"), trade.amountFen},
                                               {QStringLiteral("payer_refund"), refund.amountFen}}},
    };
    if (refund.state == SimRefund::State::Success)
        resource.insert(QStringLiteral("success_time"), beijing(refund.finishedAt, true));
    switch (refund.state) {
    case SimRefund::State::Success:
        return wechatEnvelope(resource, "refund", "REFUND.SUCCESS", QStringLiteral("退款成功"), error);
    case SimRefund::State::Abnormal:
        return wechatEnvelope(resource, "refund", "REFUND.ABNORMAL", QStringLiteral("退款异常"), error);
    case SimRefund::State::Closed:
        return wechatEnvelope(resource, "refund", "REFUND.CLOSED", QStringLiteral("退款关闭"), error);
    case SimRefund::State::Processing: break;
    }
    *error = QStringLiteral("a processing refund is not notified");
    return {};
}

// The notification envelope around a resource sealed with AES-256-GCM under the APIv3 key;
// kind is both resource.original_type and the associated data ("transaction", "refund").
QByteArray SimNotifier::wechatEnvelope(const QJsonObject &resource, QByteArrayView kind, QByteArrayView eventType,
                                       const QString &summary, QString *error) const
{
    if (m_options.apiv3Key.isEmpty()) {
        *error = QStringLiteral("no APIv3 key configured (--apiv3-key, wechat.apiv3_key or PAYONCE_WECHAT_APIV3_KEY): "
                                "the WeChat notification cannot be encrypted");
        return {};
    }
    const QByteArray nonce = randomToken(12).toLatin1();
    auto ciphertext = crypto::aes256GcmEncrypt(m_options.apiv3Key, nonce, kind,
                                               QJsonDocument(resource).toJson(QJsonDocument::Compact));
    if (!ciphertext) {
        *error = QStringLiteral("cannot encrypt the resource: ") + ciphertext.error().internalMessage;
        return {};
    }
    const QJsonObject body{
        {QStringLiteral("id"), QUuid::createUuid().toString(QUuid::WithoutBraces)},
        {QStringLiteral("create_time"), beijing(QDateTime::currentDateTimeUtc(), true)},
        {QStringLiteral("resource_type"), QStringLiteral("encrypt-resource")},
        {QStringLiteral("event_type"), QString::fromLatin1(eventType)},
        {QStringLiteral("summary"), summary},
        {QStringLiteral("resource"), QJsonObject{{QStringLiteral("original_type"), QString::fromLatin1(kind)},
                                                 {QStringLiteral("algorithm"), QStringLiteral("AEAD_AES_256_GCM")},
                                                 {QStringLiteral("ciphertext"), QString::fromLatin1(*ciphertext)},
                                                 {QStringLiteral("associated_data"), QString::fromLatin1(kind)},
                                                 {QStringLiteral("nonce"), QString::fromLatin1(nonce)}}},
    };
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QList<OutgoingPost> SimNotifier::buildPosts(Notification &n, QString *error)
{
    OutgoingPost post;
    if (n.trade.channel == Channel::WeChat) {
        const QByteArray timestamp = QByteArray::number(QDateTime::currentSecsSinceEpoch());
        const QByteArray nonce = randomToken(32).toLatin1();
        auto signature = m_platformKey.signBase64(wechat::responseMessage(timestamp, nonce, n.wechatBody));
        if (!signature) {
            *error = QStringLiteral("cannot sign: ") + signature.error().internalMessage;
            return {};
        }
        post.body = n.wechatBody;
        post.headers = {{"Content-Type", "application/json"}, {"User-Agent", "Mozilla/4.0"},
                        {"Wechatpay-Nonce", nonce},           {"Wechatpay-Serial", m_options.platformSerial.toLatin1()},
                        {"Wechatpay-Signature", *signature},  {"Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048"},
                        {"Wechatpay-Timestamp", timestamp},   {"Request-ID", randomToken(32).toLatin1()}};
    } else {
        alipay::Params params = n.alipayBase;
        params.append(qMakePair(QByteArray("notify_time"), beijing(QDateTime::currentDateTimeUtc(), false).toUtf8()));
        params.append(qMakePair(QByteArray("sign_type"), QByteArray("RSA2")));
        auto sign = alipay::signParams(m_platformKey, params, alipay::SignContentKind::Notification);
        if (!sign) {
            *error = QStringLiteral("cannot sign: ") + sign.error().internalMessage;
            return {};
        }
        params.append(qMakePair(QByteArray("sign"), *sign));
        for (const auto &[key, value] : std::as_const(params)) {
            if (!post.body.isEmpty())
                post.body += '&';
            post.body += QUrl::toPercentEncoding(QString::fromUtf8(key)) + '='
                         + QUrl::toPercentEncoding(QString::fromUtf8(value));
        }
        post.headers = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
                        {"User-Agent", "Mozilla/4.0"}};
    }
    // The notification continues the trace of the request that created the trade.
    if (const auto trace = TraceContext::parse(n.trade.traceParent))
        post.headers.append({"traceparent", trace->child().header()});
    QList<OutgoingPost> posts;
    for (const QString &target : std::as_const(n.targets)) {
        post.url = QUrl(target);
        posts.append(post);
    }
    return posts;
}

void SimNotifier::startAttempt(const std::shared_ptr<Notification> &n)
{
    QString error;
    const QList<OutgoingPost> posts = buildPosts(*n, &error);
    if (posts.isEmpty()) {
        n->error = error;
        n->gaveUp = true;
        n->gaveUpAt = QDateTime::currentDateTimeUtc();
        return;
    }
    ++n->attempts;
    n->lastPosts = posts;
    sendRound(n, posts, true);
}

bool SimNotifier::redeliver(const QString &outTradeNo)
{
    bool any = false;
    for (const auto &n : std::as_const(m_notifications)) {
        if (n->trade.outTradeNo != outTradeNo || n->lastPosts.isEmpty())
            continue;
        ++n->redeliveries;
        sendRound(n, n->lastPosts, false);
        any = true;
    }
    return any;
}

void SimNotifier::sendRound(const std::shared_ptr<Notification> &n, const QList<OutgoingPost> &posts, bool scheduled)
{
    const int copies = qMax(1, m_state->faults(n->trade.channel).duplicate);
    auto round = std::make_shared<Round>();
    round->pending = static_cast<int>(posts.size()) * copies;
    n->lastAttemptAt = QDateTime::currentDateTimeUtc();
    n->nextAttemptAt = QDateTime();
    round->entry = {{QStringLiteral("kind"), scheduled ? QStringLiteral("attempt") : QStringLiteral("redelivery")},
                    {QStringLiteral("attempt"), n->attempts},
                    {QStringLiteral("started_at"), iso(n->lastAttemptAt)},
                    {QStringLiteral("copies"), copies}};
    std::weak_ptr<Notification> weak = n;
    for (const OutgoingPost &post : posts) {
        for (int copy = 0; copy < copies; ++copy) {
            postHttp(n->scope.get(), post, m_timeoutMs,
                     [this, weak, round, scheduled, url = post.url.toString()](const PostResult &r) {
                         const auto self = weak.lock();
                         if (!self)
                             return;
                         const bool ack = acknowledged(self->trade.channel, r);
                         ++self->deliveries;
                         self->lastStatus = r.status;
                         self->lastOutcome = outcomeName(r, ack);
                         self->lastError = r.error;
                         auto &target = self->targetStates[url];
                         ++target.deliveries;
                         target.lastStatus = r.status;
                         target.lastOutcome = self->lastOutcome;
                         if (ack) {
                             target.acknowledged = true;
                             ++self->acknowledgements;
                             if (!self->acknowledged) {
                                 self->acknowledged = true;
                                 self->acknowledgedAt = QDateTime::currentDateTimeUtc();
                             }
                             if (self->timer)
                                 self->timer->stop();
                             self->nextAttemptAt = QDateTime();
                         }
                         QJsonObject result{{QStringLiteral("target"), url},
                                            {QStringLiteral("status"), r.status},
                                            {QStringLiteral("outcome"), self->lastOutcome}};
                         if (!r.error.isEmpty())
                             result.insert(QStringLiteral("error"), r.error);
                         if (round->results.size() < 20)
                             round->results.append(result);
                         if (--round->pending == 0) {
                             round->entry.insert(QStringLiteral("results"), round->results);
                             round->entry.insert(QStringLiteral("ended_at"), iso(QDateTime::currentDateTimeUtc()));
                             self->history.append(round->entry);
                             roundFinished(self, scheduled);
                         }
                     });
        }
    }
}

void SimNotifier::roundFinished(const std::shared_ptr<Notification> &n, bool scheduled)
{
    if (!scheduled || n->acknowledged)
        return;
    n->roundEndedAt = QDateTime::currentDateTimeUtc();
    const QList<qint64> intervals = retryScheduleSeconds(n->trade.channel);
    if (n->attempts - 1 >= intervals.size()) {
        n->gaveUp = true;
        n->gaveUpAt = n->roundEndedAt;
        n->nextIntervalSeconds = -1;
        return;
    }
    n->nextIntervalSeconds = intervals.at(n->attempts - 1);
    schedule(n);
}

void SimNotifier::schedule(const std::shared_ptr<Notification> &n)
{
    if (!n->timer) {
        n->timer = new QTimer(n->scope.get());
        n->timer->setSingleShot(true);
        std::weak_ptr<Notification> weak = n;
        connect(n->timer, &QTimer::timeout, this, [this, weak] {
            if (const auto self = weak.lock(); self && !self->acknowledged)
                startAttempt(self);
        });
    }
    const double dueMs = static_cast<double>(n->nextIntervalSeconds) * 1000.0 * m_timeScale;
    const QDateTime due = n->roundEndedAt.addMSecs(static_cast<qint64>(std::llround(dueMs)));
    const qint64 wait = qBound<qint64>(0, QDateTime::currentDateTimeUtc().msecsTo(due), qint64(INT_MAX));
    n->nextAttemptAt = due;
    n->timer->start(static_cast<int>(wait));
}

void SimNotifier::setTimeScale(double scale)
{
    m_timeScale = scale;
    for (const auto &n : std::as_const(m_notifications)) {
        if (n->timer && n->timer->isActive())
            schedule(n);
    }
}

bool SimNotifier::acknowledged(Channel channel, const PostResult &r) const
{
    if (r.outcome != PostResult::Outcome::Completed)
        return false;
    if (channel == Channel::Alipay)
        return r.status == 200 && r.body == "success";
    if (r.status != 200 && r.status != 204)
        return false;
    if (r.body.trimmed().isEmpty())
        return true;
    return QJsonDocument::fromJson(r.body).object().value(u"code").toString() == u"SUCCESS";
}

QJsonArray SimNotifier::notificationsJson(const QString &outTradeNo) const
{
    QList<std::shared_ptr<Notification>> list;
    for (const auto &n : m_notifications) {
        if (outTradeNo.isEmpty() || n->trade.outTradeNo == outTradeNo)
            list.append(n);
    }
    // Oldest first; a payment before its refunds when the clock cannot tell them apart.
    std::sort(list.begin(), list.end(), [](const auto &a, const auto &b) {
        if (a->createdAt != b->createdAt)
            return a->createdAt < b->createdAt;
        return !a->refund && b->refund;
    });
    QJsonArray out;
    for (const auto &n : std::as_const(list)) {
        QJsonArray targets;
        for (const QString &url : std::as_const(n->targets)) {
            const auto t = n->targetStates.value(url);
            targets.append(QJsonObject{{QStringLiteral("url"), url},
                                       {QStringLiteral("deliveries"), t.deliveries},
                                       {QStringLiteral("last_status"), t.lastStatus},
                                       {QStringLiteral("last_outcome"), t.lastOutcome},
                                       {QStringLiteral("acknowledged"), t.acknowledged}});
        }
        const QString state = n->acknowledged ? QStringLiteral("acknowledged")
                              : n->gaveUp     ? QStringLiteral("gave_up")
                                              : QStringLiteral("retrying");
        QJsonObject o{
            {QStringLiteral("kind"), n->refund ? QStringLiteral("refund") : QStringLiteral("payment")},
            {QStringLiteral("channel"), core::channelName(n->trade.channel)},
            {QStringLiteral("out_trade_no"), n->trade.outTradeNo},
            {QStringLiteral("pay_no"), n->trade.payNo},
            {QStringLiteral("state"), state},
            {QStringLiteral("attempts"), n->attempts},
            {QStringLiteral("max_attempts"), static_cast<int>(retryScheduleSeconds(n->trade.channel).size()) + 1},
            {QStringLiteral("redeliveries"), n->redeliveries},
            {QStringLiteral("deliveries"), n->deliveries},
            {QStringLiteral("acknowledgements"), n->acknowledgements},
            {QStringLiteral("acknowledged"), n->acknowledged},
            {QStringLiteral("gave_up"), n->gaveUp},
            {QStringLiteral("last_status"), n->lastStatus},
            {QStringLiteral("last_outcome"), n->lastOutcome},
            {QStringLiteral("last_attempt_at"), iso(n->lastAttemptAt)},
            {QStringLiteral("next_attempt_at"), iso(n->nextAttemptAt)},
            {QStringLiteral("acknowledged_at"), iso(n->acknowledgedAt)},
            {QStringLiteral("gave_up_at"), iso(n->gaveUpAt)},
            {QStringLiteral("targets"), targets},
            {QStringLiteral("history"), n->history}};
        if (n->refund) {
            o.insert(QStringLiteral("out_refund_no"), n->refund->outRefundNo);
            o.insert(QStringLiteral("refund_state"), refundStateName(n->refund->state));
        }
        if (!n->lastError.isEmpty())
            o.insert(QStringLiteral("last_error"), n->lastError);
        if (!n->error.isEmpty())
            o.insert(QStringLiteral("error"), n->error);
        out.append(o);
    }
    return out;
}

} // namespace payonce::sim
