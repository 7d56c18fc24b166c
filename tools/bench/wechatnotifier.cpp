#include "wechatnotifier.h"

#include "httpexchange.h"

#include "crypto/securerandom.h"
#include "sim/notificationsigning.h"

#include <QDateTime>
#include <QTimeZone>

namespace payonce::bench {

namespace {
/// RFC 3339 in Beijing time, as the platform writes its times.
QString beijingTime(const QDateTime &utc)
{
    return utc.toTimeZone(QTimeZone(8 * 3600)).toString(Qt::ISODate);
}
} // namespace

WeChatNotifier::WeChatNotifier(crypto::PrivateKey platformKey, QByteArray serial, Merchant merchant)
    : m_platformKey(std::move(platformKey)), m_serial(std::move(serial)), m_merchant(std::move(merchant))
{
}

core::Result<QByteArray> WeChatNotifier::paidRequest(const QString &paymentNo, const QString &payNo,
                                                     qint64 totalFen) const
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    platform::wechat::TransactionFields fields;
    fields.mchid = m_merchant.mchId;
    fields.appid = m_merchant.appId;
    fields.outTradeNo = paymentNo;
    fields.transactionId = payNo;
    fields.successTime = beijingTime(now);
    fields.openid = QStringLiteral("oBenchPayer");
    fields.totalFen = totalFen;
    auto resourceNonce = crypto::nonceString(12);
    auto headerNonce = crypto::nonceString(32);
    if (!resourceNonce.ok())
        return resourceNonce.error();
    if (!headerNonce.ok())
        return headerNonce.error();
    auto resource = platform::wechat::encryptResource(m_merchant.apiv3Key, platform::wechat::transactionJson(fields),
                                                      "transaction", resourceNonce->toLatin1());
    if (!resource.ok())
        return resource.error();
    const QByteArray body = platform::wechat::notificationBody(
        QString(QStringLiteral("EV-") + payNo).toUtf8(), beijingTime(now).toUtf8(), "TRANSACTION.SUCCESS",
        "\xe6\x94\xaf\xe4\xbb\x98\xe6\x88\x90\xe5\x8a\x9f", *resource); // 支付成功
    auto signedHeaders = platform::wechat::signNotification(m_platformKey, m_serial, now.toSecsSinceEpoch(),
                                                            headerNonce->toLatin1(), body);
    if (!signedHeaders.ok())
        return signedHeaders.error();
    QByteArray headerLines;
    for (const auto &[name, value] : platform::wechat::notificationHeaders(*signedHeaders)) {
        // Content-Type comes with the body from httpRequest().
        if (name.compare("Content-Type", Qt::CaseInsensitive) != 0)
            headerLines += name + ": " + value + "\r\n";
    }
    return httpRequest("POST", "/api/v1/callbacks/wechat", headerLines, body);
}

} // namespace payonce::bench
