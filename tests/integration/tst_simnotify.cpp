// payonce-sim's notification side, with payonce-sim as a child process and a
// small HTTP receiver in the test standing in for the agent: WeChat Pay v3 notifications
// whose signature and AES-256-GCM resource are checked by an independent tool
// (/usr/bin/python3 with python3-cryptography), Alipay forms whose sign is checked by the
// openssl CLI, re-delivery on the scaled schedule until acknowledged, giving up after the
// last attempt, duplicate copies, extra callback targets and redelivery.
// Refund notifications: WeChat REFUND.SUCCESS / REFUND.CLOSED (refund_fail)
// checked the same independent way and by payonce's own refund verifier, Alipay's refund
// trade_status_sync checked by openssl, and both re-delivered until acknowledged.

#include "callbacks/platformnotificationverifier.h"
#include "gateway/blockinghttp.h"
#include "gateway/gatewayfactory.h"
#include "receivedrequest.h"
#include "simprocess.h"
#include "support/serverharness.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace payonce;
using namespace payonce::gateway;
using namespace payonce::platform;

namespace {

// The merchant the simulator is started for (its defaults).
const QString kMchid = testsupport::SimProcess::Options{}.mchId;
const QString kAppid = testsupport::SimProcess::Options{}.appId;
const QString kAlipayAppId = testsupport::SimProcess::Options{}.alipayAppId;
const QString kSellerId = QStringLiteral("2088000000000001");
const QByteArray kApiv3Key = "0123456789abcdefABCDEF0123456789";

QString fixture(const char *name)
{
    return QStringLiteral(PAYONCE_FIXTURES_DIR "/crypto/") + QString::fromLatin1(name);
}

// Verifies a WeChat notification and decrypts its resource, knowing nothing of payonce.
const char *const kWeChatCheck =
    "import sys, json, base64\n"
    "from cryptography.hazmat.primitives import hashes, serialization\n"
    "from cryptography.hazmat.primitives.asymmetric import padding\n"
    "from cryptography.hazmat.primitives.ciphers.aead import AESGCM\n"
    "d = sys.argv[1]\n"
    "def rd(n):\n"
    "    return open(d + '/' + n, 'rb').read()\n"
    "pub = serialization.load_pem_public_key(rd('platform.pem'))\n"
    "body = rd('body')\n"
    "message = rd('timestamp') + b'\\n' + rd('nonce') + b'\\n' + body + b'\\n'\n"
    "pub.verify(base64.b64decode(rd('signature')), message, padding.PKCS1v15(), hashes.SHA256())\n"
    "n = json.loads(body)\n"
    "r = n['resource']\n"
    "plain = AESGCM(rd('apiv3')).decrypt(r['nonce'].encode(), base64.b64decode(r['ciphertext']), "
    "r['associated_data'].encode())\n"
    "print(json.dumps({'notification': n, 'transaction': json.loads(plain)}))\n";

// Decodes an Alipay form and writes the sorted k=v string (without sign, sign_type and
// empty values) and the raw signature for openssl dgst.
const char *const kAlipayPrepare =
    "import sys, json, base64, urllib.parse\n"
    "d = sys.argv[1]\n"
    "pairs = urllib.parse.parse_qsl(open(d + '/form', 'rb').read().decode('utf-8'), keep_blank_values=True, "
    "strict_parsing=True)\n"
    "fields = dict(pairs)\n"
    "content = '&'.join(k + '=' + v for k, v in sorted(pairs) if k not in ('sign', 'sign_type'))\n"
    "open(d + '/content', 'wb').write(content.encode('utf-8'))\n"
    "open(d + '/sign.bin', 'wb').write(base64.b64decode(fields['sign']))\n"
    "print(json.dumps(fields))\n";

struct Delivery {
    QByteArray path;
    QHash<QByteArray, QByteArray> headers; // lower-case names
    QByteArray body;
    qint64 receivedMs = 0;
};

/// The agent's stand-in: records every request; answers FAIL to the first failFirst of
/// them (all when failAlways), then acknowledges; holdMs delays every answer (to see
/// concurrent copies in flight at once).
class Receiver {
public:
    Receiver()
    {
        m_server.listen(QHostAddress::LocalHost, 0);
        QObject::connect(&m_server, &QTcpServer::newConnection, &m_server, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                accept(socket);
        });
        m_clock.start();
    }
    QString url(const char *path) const
    {
        return QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()) + QLatin1String(path);
    }

    QList<Delivery> deliveries;
    int failFirst = 0;
    bool failAlways = false;
    int holdMs = 0;
    int inFlight = 0;
    int maxInFlight = 0;

    void clear()
    {
        deliveries.clear();
        failFirst = 0;
        failAlways = false;
        holdMs = 0;
        inFlight = maxInFlight = 0;
    }
    QList<Delivery> at(const QByteArray &path) const
    {
        QList<Delivery> out;
        for (const Delivery &d : deliveries) {
            if (d.path == path)
                out.append(d);
        }
        return out;
    }

private:
    void accept(QTcpSocket *socket)
    {
        auto buffer = std::make_shared<QByteArray>();
        QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
            *buffer += socket->readAll();
            const std::optional<testsupport::ReceivedRequest> request = testsupport::takeRequest(*buffer);
            if (!request)
                return;
            Delivery d{request->path, {}, request->body, m_clock.elapsed()};
            for (const auto &[name, value] : request->headers)
                d.headers.insert(name.toLower(), value);
            const bool fail = failAlways || deliveries.size() < failFirst;
            deliveries.append(d);
            maxInFlight = qMax(maxInFlight, ++inFlight);
            const bool alipay = d.path.startsWith("/alipay");
            QByteArray status = "200 OK", body;
            if (alipay)
                body = fail ? "failure" : "success";
            else if (fail)
                status = "500 Internal Server Error", body = "{\"code\":\"FAIL\",\"message\":\"try again\"}";
            else
                body = "{\"code\":\"SUCCESS\",\"message\":\"OK\"}";
            const QByteArray answer = "HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: "
                                      + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
            QTimer::singleShot(holdMs, socket, [this, socket, answer] {
                --inFlight;
                socket->write(answer);
                socket->disconnectFromHost();
            });
        });
    }

    QTcpServer m_server;
    QElapsedTimer m_clock;
};

} // namespace

class TestSimNotify : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanupTestCase();

    void wechatNotificationVerifiesAndDecrypts();
    void failuresAreRedeliveredOnTheScaledSchedule();
    void alipayFormVerifiesWithOpenssl();
    void duplicateFaultSendsConcurrentCopies();
    void neverAcknowledgedGivesUpAfterTheLastAttempt();
    void refusedConnectionGivesUpToo();
    void callbackTargetsAndRedeliver();
    void badApiv3KeyIsRefused();

    void wechatRefundNotificationVerifiesAndDecrypts_data();
    void wechatRefundNotificationVerifiesAndDecrypts();
    void alipayRefundNotificationVerifiesWithOpenssl();
    void refundNotificationsAreRetriedUntilAcknowledged_data();
    void refundNotificationsAreRetriedUntilAcknowledged();

private:
    QJsonObject control(const QByteArray &method, const QString &path, const QJsonObject &body = {})
    {
        return m_sim->control(method, path, body);
    }
    std::unique_ptr<core::PaymentGateway> makeGateway(core::Channel channel);
    QString createAndPay(core::Channel channel, const QString &notifyUrl, qint64 amountFen, QString *payNo = nullptr);
    /// Refunds amountFen of the trade outTradeNo (total totalFen) through the real client;
    /// the refund's notify_url is notifyUrl. Returns the refundNo, empty on failure.
    QString refund(core::Channel channel, const QString &outTradeNo, qint64 amountFen, qint64 totalFen,
                   const QString &notifyUrl);
    QJsonObject refundNotification(const QString &outTradeNo, const QString &refundNo);
    /// Writes a WeChat delivery where kWeChatCheck reads it; the folder.
    QString writeWeChatDelivery(const Delivery &d, const QString &name);
    /// Writes an Alipay form, prepares it with kAlipayPrepare (its fields into *fields)
    /// and checks its sign with openssl dgst; the folder.
    bool alipaySignVerifies(const QString &folder);
    /// payonce's own verifier, trusting this simulator's platform key and APIv3 key.
    callbacks::PlatformNotificationVerifier simVerifier() const;
    QJsonObject notification(const QString &outTradeNo);
    QJsonObject runPython(const char *script, const QString &folder, bool expectFailure = false);

    QTemporaryDir m_dir;
    std::unique_ptr<testsupport::SimProcess> m_sim;
    QByteArray m_platformPem;
    int m_counter = 0;
    Receiver m_receiver;
};

void TestSimNotify::initTestCase()
{
    QVERIFY(m_dir.isValid());
    testsupport::SimProcess::Options options;
    options.merchantPublicKey = fixture("merchant_pub.pem");
    options.alipaySellerId = kSellerId;
    options.platformSerial.clear();
    options.apiv3Key = kApiv3Key;
    QString error;
    m_sim = testsupport::SimProcess::start(options, &error);
    QVERIFY2(m_sim, qPrintable(error));
    m_platformPem = m_sim->platformKeyPem();
    QFile apiv3(m_dir.filePath(QStringLiteral("apiv3")));
    QVERIFY(apiv3.open(QIODevice::WriteOnly));
    apiv3.write(kApiv3Key);
}

void TestSimNotify::init()
{
    QVERIFY(control("POST", QStringLiteral("/sim/reset")).value(u"reset").toBool());
    m_receiver.clear();
}

void TestSimNotify::cleanupTestCase()
{
    QVERIFY2(!m_sim || m_sim->stop(), "payonce-sim did not end cleanly on SIGTERM");
}

std::unique_ptr<core::PaymentGateway> TestSimNotify::makeGateway(core::Channel channel)
{
    GatewayFactoryOptions options;
    options.timeoutMs = 10000;
    options.baseUrlOverride = m_sim->baseUrl();
    options.extraPlatformKeys = {{QStringLiteral("PAYONCE_SIM_0001"), m_platformPem}};
    std::unique_ptr<core::PaymentGateway> gateway;
    if (channel == core::Channel::WeChat) {
        config::WeChatSettings settings;
        settings.mchid = kMchid;
        settings.appid = kAppid;
        settings.merchantSerial = QStringLiteral("MERCHANT_SERIAL_01");
        settings.merchantPrivateKeyPath = fixture("merchant_key.pem");
        auto made = makeWeChatPayGateway(settings, options);
        if (!made)
            qFatal("%s", qPrintable(made.error().internalMessage));
        gateway = std::move(made).value();
    } else {
        config::AlipaySettings settings;
        settings.appId = kAlipayAppId;
        settings.sellerId = kSellerId;
        settings.privateKeyPath = fixture("merchant_key.pem");
        settings.alipayPublicKeyPath = m_sim->platformKeyPath();
        auto made = makeAlipayGateway(settings, options);
        if (!made)
            qFatal("%s", qPrintable(made.error().internalMessage));
        gateway = std::move(made).value();
    }
    return gateway;
}

// Creates the trade through the real gateway client (signed as the agent signs) with
// notifyUrl, then pays it at the simulator.
QString TestSimNotify::createAndPay(core::Channel channel, const QString &notifyUrl, qint64 amountFen, QString *payNo)
{
    const auto gateway = makeGateway(channel);
    core::GatewayOrderRequest request;
    request.paymentNo = QStringLiteral("PN%1_%2").arg(++m_counter).arg(QDateTime::currentMSecsSinceEpoch());
    request.orderNo = QStringLiteral("ORD%1").arg(m_counter);
    request.amountFen = amountFen;
    request.description = QStringLiteral("payonce test order");
    request.notifyUrl = notifyUrl;
    auto created = gateway->createOrder(request);
    if (!created) {
        qWarning("create: %s", qPrintable(created.error().internalMessage));
        return {};
    }
    const QJsonObject paid = control(
        "POST", QStringLiteral("/sim/pay"),
        {{QStringLiteral("channel"), core::channelName(channel)}, {QStringLiteral("out_trade_no"), request.paymentNo}});
    if (paid.value(u"notify_url").toString() != notifyUrl)
        qWarning("the trade's notify_url is %s", qPrintable(paid.value(u"notify_url").toString()));
    if (payNo)
        *payNo = paid.value(u"pay_no").toString();
    return request.paymentNo;
}

QString TestSimNotify::refund(core::Channel channel, const QString &outTradeNo, qint64 amountFen, qint64 totalFen,
                              const QString &notifyUrl)
{
    core::GatewayRefundRequest request;
    request.paymentNo = outTradeNo;
    request.refundNo = QStringLiteral("RF%1_%2").arg(++m_counter).arg(QDateTime::currentMSecsSinceEpoch());
    request.amountFen = amountFen;
    request.totalFen = totalFen;
    request.reason = QStringLiteral("payonce test refund");
    request.notifyUrl = notifyUrl;
    auto refunded = makeGateway(channel)->refund(request);
    if (!refunded) {
        qWarning("refund: %s", qPrintable(refunded.error().internalMessage));
        return {};
    }
    return request.refundNo;
}

QJsonObject TestSimNotify::refundNotification(const QString &outTradeNo, const QString &refundNo)
{
    const QJsonArray all =
        control("GET", QStringLiteral("/sim/notifications/") + outTradeNo).value(u"notifications").toArray();
    for (const QJsonValue &n : all) {
        if (n.toObject().value(u"kind").toString() == u"refund"
            && n.toObject().value(u"out_refund_no").toString() == refundNo)
            return n.toObject();
    }
    return {};
}

QString TestSimNotify::writeWeChatDelivery(const Delivery &d, const QString &name)
{
    const QString folder = m_dir.filePath(name);
    QDir().mkpath(folder);
    const QList<QPair<const char *, QByteArray>> files{{"platform.pem", m_platformPem},
                                                       {"apiv3", kApiv3Key},
                                                       {"body", d.body},
                                                       {"timestamp", d.headers.value("wechatpay-timestamp")},
                                                       {"nonce", d.headers.value("wechatpay-nonce")},
                                                       {"signature", d.headers.value("wechatpay-signature")}};
    for (const auto &[file, bytes] : files) {
        QFile f(folder + u'/' + QLatin1String(file));
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
            qWarning("cannot write %s", file);
    }
    return folder;
}

bool TestSimNotify::alipaySignVerifies(const QString &folder)
{
    QProcess openssl;
    openssl.start(QStringLiteral("openssl"),
                  {QStringLiteral("dgst"), QStringLiteral("-sha256"), QStringLiteral("-verify"),
                   m_sim->platformKeyPath(), QStringLiteral("-signature"), folder + QStringLiteral("/sign.bin"),
                   folder + QStringLiteral("/content")});
    return openssl.waitForFinished(30000) && openssl.exitStatus() == QProcess::NormalExit && openssl.exitCode() == 0;
}

callbacks::PlatformNotificationVerifier TestSimNotify::simVerifier() const
{
    callbacks::NotificationVerifierOptions options;
    auto key = crypto::PublicKey::fromPem(m_platformPem, QStringLiteral("the simulator's platform key"));
    if (!key)
        qFatal("%s", qPrintable(key.error().internalMessage));
    options.weChatPlatformKeys.addKey(QStringLiteral("PAYONCE_SIM_0001"), *key);
    options.apiv3Key = kApiv3Key;
    options.alipayPublicKey = *key; // the simulator signs Alipay's notifies with the same key
    return callbacks::PlatformNotificationVerifier(std::move(options));
}

QJsonObject TestSimNotify::notification(const QString &outTradeNo)
{
    return control("GET", QStringLiteral("/sim/notifications/") + outTradeNo)
        .value(u"notifications")
        .toArray()
        .first()
        .toObject();
}

QJsonObject TestSimNotify::runPython(const char *script, const QString &folder, bool expectFailure)
{
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QString::fromLatin1(script), folder});
    if (!python.waitForFinished(30000) || python.exitCode() != 0) {
        if (!expectFailure)
            qWarning("python3: %s", python.readAllStandardError().constData());
        return {};
    }
    return QJsonDocument::fromJson(python.readAllStandardOutput()).object();
}

void TestSimNotify::wechatNotificationVerifiesAndDecrypts()
{
    QString payNo;
    const QString outTradeNo = createAndPay(core::Channel::WeChat, m_receiver.url("/wechat"), 9900, &payNo);
    QVERIFY(!outTradeNo.isEmpty());
    QVERIFY(!payNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.deliveries.size(), 1, 10000);
    const Delivery d = m_receiver.deliveries.first();
    QCOMPARE(d.path, QByteArray("/wechat"));
    QVERIFY(d.headers.value("content-type").startsWith("application/json"));
    QCOMPARE(d.headers.value("wechatpay-serial"), QByteArray("PAYONCE_SIM_0001"));
    QCOMPARE(d.headers.value("wechatpay-signature-type"), QByteArray("WECHATPAY2-SHA256-RSA2048"));
    QVERIFY(qAbs(d.headers.value("wechatpay-timestamp").toLongLong() - QDateTime::currentSecsSinceEpoch()) < 60);

    const QString folder = m_dir.filePath(QStringLiteral("wechat1"));
    QVERIFY(QDir().mkpath(folder));
    auto put = [&folder](const char *name, const QByteArray &bytes) {
        QFile f(folder + u'/' + QLatin1String(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    };
    put("platform.pem", m_platformPem);
    put("apiv3", kApiv3Key);
    put("body", d.body);
    put("timestamp", d.headers.value("wechatpay-timestamp"));
    put("nonce", d.headers.value("wechatpay-nonce"));
    put("signature", d.headers.value("wechatpay-signature"));
    const QJsonObject checked = runPython(kWeChatCheck, folder);
    QVERIFY2(!checked.isEmpty(), "the signature or the resource did not verify with python3-cryptography");

    const QJsonObject n = checked.value(u"notification").toObject();
    QCOMPARE(n.value(u"event_type").toString(), QStringLiteral("TRANSACTION.SUCCESS"));
    QCOMPARE(n.value(u"resource_type").toString(), QStringLiteral("encrypt-resource"));
    QVERIFY(!n.value(u"id").toString().isEmpty());
    QVERIFY(n.value(u"create_time").toString().endsWith(QStringLiteral("+08:00")));
    const QJsonObject resource = n.value(u"resource").toObject();
    QCOMPARE(resource.value(u"algorithm").toString(), QStringLiteral("AEAD_AES_256_GCM"));
    QCOMPARE(resource.value(u"original_type").toString(), QStringLiteral("transaction"));
    QCOMPARE(resource.value(u"associated_data").toString(), QStringLiteral("transaction"));
    QCOMPARE(resource.value(u"nonce").toString().size(), 12);
    const QJsonObject t = checked.value(u"transaction").toObject();
    QCOMPARE(t.value(u"out_trade_no").toString(), outTradeNo);
    QCOMPARE(t.value(u"transaction_id").toString(), payNo);
    QCOMPARE(t.value(u"mchid").toString(), kMchid);
    QCOMPARE(t.value(u"appid").toString(), kAppid);
    QCOMPARE(t.value(u"trade_state").toString(), QStringLiteral("SUCCESS"));
    QCOMPARE(t.value(u"trade_type").toString(), QStringLiteral("NATIVE"));
    QVERIFY(t.value(u"success_time").toString().endsWith(QStringLiteral("+08:00")));
    QVERIFY(!t.value(u"payer").toObject().value(u"openid").toString().isEmpty());
    const QJsonObject amount = t.value(u"amount").toObject();
    QCOMPARE(amount.value(u"total").toInteger(), 9900);
    QCOMPARE(amount.value(u"payer_total").toInteger(), 9900);
    QCOMPARE(amount.value(u"currency").toString(), QStringLiteral("CNY"));
    QCOMPARE(amount.value(u"payer_currency").toString(), QStringLiteral("CNY"));

    // The independent check can fail: one changed byte of the body does not verify.
    QByteArray tampered = d.body;
    tampered[tampered.size() / 2] = static_cast<char>(tampered[tampered.size() / 2] ^ 0x01);
    put("body", tampered);
    QVERIFY(runPython(kWeChatCheck, folder, true).isEmpty());

    // Acknowledged at once: one attempt, nothing scheduled.
    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"acknowledged").toBool(), 5000);
    const QJsonObject state = notification(outTradeNo);
    QCOMPARE(state.value(u"attempts").toInt(), 1);
    QCOMPARE(state.value(u"state").toString(), QStringLiteral("acknowledged"));
    QCOMPARE(state.value(u"last_status").toInt(), 200);
    QCOMPARE(state.value(u"next_attempt_at").toString(), QString());
    QCOMPARE(state.value(u"max_attempts").toInt(), 16);
}

void TestSimNotify::failuresAreRedeliveredOnTheScaledSchedule()
{
    // 15 s, 15 s, 30 s, 3 min scaled by 0.005: 75, 75, 150 ms, then 900 ms.
    QCOMPARE(control("POST", QStringLiteral("/sim/notify-config"), {{QStringLiteral("time_scale"), 0.005}})
                 .value(u"time_scale")
                 .toDouble(),
             0.005);
    m_receiver.failFirst = 3;
    const QString outTradeNo = createAndPay(core::Channel::WeChat, m_receiver.url("/wechat"), 1234);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.deliveries.size(), 4, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"acknowledged").toBool(), 5000);
    const QList<Delivery> d = m_receiver.deliveries;
    const qint64 expected[] = {75, 75, 150};
    for (int i = 1; i < 4; ++i) {
        const qint64 gap = d.at(i).receivedMs - d.at(i - 1).receivedMs;
        QVERIFY2(
            gap >= expected[i - 1] - 10 && gap < expected[i - 1] + 2000,
            qPrintable(QStringLiteral("gap %1: %2 ms, expected about %3 ms").arg(i).arg(gap).arg(expected[i - 1])));
    }
    // Same notification every time (same body), freshly signed per attempt.
    QCOMPARE(d.at(3).body, d.at(0).body);
    QVERIFY(d.at(3).headers.value("wechatpay-nonce") != d.at(0).headers.value("wechatpay-nonce"));
    QJsonObject state = notification(outTradeNo);
    QCOMPARE(state.value(u"attempts").toInt(), 4);
    QCOMPARE(state.value(u"deliveries").toInt(), 4);
    QCOMPARE(state.value(u"state").toString(), QStringLiteral("acknowledged"));
    QCOMPARE(state.value(u"history").toArray().size(), 4);
    QCOMPARE(state.value(u"history")
                 .toArray()
                 .first()
                 .toObject()
                 .value(u"results")
                 .toArray()
                 .first()
                 .toObject()
                 .value(u"status")
                 .toInt(),
             500);
    // Nothing more after the acknowledgement (the 5th attempt would be 900 ms later).
    QTest::qWait(1500);
    QCOMPARE(m_receiver.deliveries.size(), 4);
    QCOMPARE(notification(outTradeNo).value(u"attempts").toInt(), 4);
}

void TestSimNotify::alipayFormVerifiesWithOpenssl()
{
    QString payNo;
    const QString outTradeNo = createAndPay(core::Channel::Alipay, m_receiver.url("/alipay"), 9900, &payNo);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.deliveries.size(), 1, 10000);
    const Delivery d = m_receiver.deliveries.first();
    QVERIFY(d.headers.value("content-type").startsWith("application/x-www-form-urlencoded"));
    const QString folder = m_dir.filePath(QStringLiteral("alipay1"));
    QVERIFY(QDir().mkpath(folder));
    {
        QFile form(folder + QStringLiteral("/form"));
        QVERIFY(form.open(QIODevice::WriteOnly));
        form.write(d.body);
    }
    const QJsonObject fields = runPython(kAlipayPrepare, folder);
    QVERIFY(!fields.isEmpty());
    QVERIFY2(alipaySignVerifies(folder), "openssl dgst -sha256 -verify refused the form's sign");
    QCOMPARE(fields.value(u"total_amount").toString(), QStringLiteral("99.00"));
    QCOMPARE(fields.value(u"out_trade_no").toString(), outTradeNo);
    QCOMPARE(fields.value(u"trade_no").toString(), payNo);
    QCOMPARE(fields.value(u"trade_status").toString(), QStringLiteral("TRADE_SUCCESS"));
    QCOMPARE(fields.value(u"notify_type").toString(), QStringLiteral("trade_status_sync"));
    QCOMPARE(fields.value(u"sign_type").toString(), QStringLiteral("RSA2"));
    QCOMPARE(fields.value(u"app_id").toString(), kAlipayAppId);
    QCOMPARE(fields.value(u"seller_id").toString(), kSellerId);
    QCOMPARE(fields.value(u"charset").toString(), QStringLiteral("utf-8"));
    QVERIFY(!fields.value(u"notify_id").toString().isEmpty());
    QVERIFY(!fields.value(u"notify_time").toString().isEmpty());
    QVERIFY(!fields.value(u"gmt_payment").toString().isEmpty());
    // As Alipay does, a parameter the merchant left empty is sent empty (and signed).
    QVERIFY2(fields.contains(u"body"), "no empty body parameter");
    QCOMPARE(fields.value(u"body").toString(), QString());
    // The check can fail: another amount in the signed string does not verify.
    QFile content(folder + QStringLiteral("/content"));
    QVERIFY(content.open(QIODevice::ReadWrite));
    QByteArray text = content.readAll();
    QVERIFY(text.contains("total_amount=99.00"));
    QVERIFY2(text.contains("&body=&"), "the empty parameter is not in the signed text"); // verified above
    text.replace("total_amount=99.00", "total_amount=99.01");
    content.seek(0);
    content.write(text);
    content.close();
    QVERIFY(!alipaySignVerifies(folder));

    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"acknowledged").toBool(), 5000);
    QCOMPARE(notification(outTradeNo).value(u"max_attempts").toInt(), 8);
}

void TestSimNotify::duplicateFaultSendsConcurrentCopies()
{
    const QJsonObject faults = control(
        "POST", QStringLiteral("/sim/faults"),
        {{QStringLiteral("channel"), QStringLiteral("wechat")}, {QStringLiteral("duplicate"), 6}});
    QCOMPARE(faults.value(u"wechat").toObject().value(u"duplicate").toInt(), 6);
    m_receiver.holdMs = 700; // every copy must be in flight before the first is answered
    const QString outTradeNo = createAndPay(core::Channel::WeChat, m_receiver.url("/wechat"), 500);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.deliveries.size(), 6, 10000);
    QCOMPARE(m_receiver.maxInFlight, 6);
    for (const Delivery &d : std::as_const(m_receiver.deliveries)) {
        QCOMPARE(d.body, m_receiver.deliveries.first().body);
        QCOMPARE(d.headers.value("wechatpay-signature"),
                 m_receiver.deliveries.first().headers.value("wechatpay-signature"));
    }
    QTRY_COMPARE_WITH_TIMEOUT(notification(outTradeNo).value(u"deliveries").toInt(), 6, 5000);
    const QJsonObject state = notification(outTradeNo);
    QCOMPARE(state.value(u"attempts").toInt(), 1);
    QCOMPARE(state.value(u"acknowledgements").toInt(), 6);
    QVERIFY(state.value(u"acknowledged").toBool());
}

void TestSimNotify::neverAcknowledgedGivesUpAfterTheLastAttempt()
{
    // WeChat's 24 h 4 min scaled by 0.00005: about 4.3 s for 16 attempts.
    control("POST", QStringLiteral("/sim/notify-config"), {{QStringLiteral("time_scale"), 0.00005}});
    m_receiver.failAlways = true;
    const QString outTradeNo = createAndPay(core::Channel::WeChat, m_receiver.url("/wechat"), 100);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"gave_up").toBool(), 30000);
    QJsonObject state = notification(outTradeNo);
    QCOMPARE(state.value(u"state").toString(), QStringLiteral("gave_up"));
    QCOMPARE(state.value(u"attempts").toInt(), 16);
    QCOMPARE(state.value(u"acknowledged").toBool(), false);
    QCOMPARE(state.value(u"last_status").toInt(), 500);
    QCOMPARE(state.value(u"next_attempt_at").toString(), QString());
    QVERIFY(!state.value(u"gave_up_at").toString().isEmpty());
    QCOMPARE(m_receiver.deliveries.size(), 16);
    // The last interval (6 h scaled: 1080 ms) was waited for. The receive times are this
    // test's event loop's, which can take the 15th copy late on a loaded machine (a full
    // run once measured 1 051 ms): 1 000 ms still tells it from the 3 h interval (540 ms)
    // and from giving up without waiting.
    const qint64 lastGap = m_receiver.deliveries.at(15).receivedMs - m_receiver.deliveries.at(14).receivedMs;
    QVERIFY2(lastGap >= 1000, qPrintable(QString::number(lastGap)));
    QTest::qWait(1500);
    QCOMPARE(m_receiver.deliveries.size(), 16);
}

void TestSimNotify::refusedConnectionGivesUpToo()
{
    // Alipay's 24 h 24 min scaled by 0.00005 (about 4.4 s for 8 attempts), to a port
    // nothing listens on.
    control("POST", QStringLiteral("/sim/notify-config"), {{QStringLiteral("time_scale"), 0.00005}});
    const int closedPort = testsupport::freeLoopbackPort();
    const QString outTradeNo = createAndPay(core::Channel::Alipay,
                                            QStringLiteral("http://127.0.0.1:%1/alipay").arg(closedPort), 100);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"gave_up").toBool(), 30000);
    const QJsonObject state = notification(outTradeNo);
    QCOMPARE(state.value(u"attempts").toInt(), 8);
    QCOMPARE(state.value(u"last_outcome").toString(), QStringLiteral("failed"));
    QVERIFY(!state.value(u"last_error").toString().isEmpty());
}

void TestSimNotify::callbackTargetsAndRedeliver()
{
    const QJsonObject targets = control("POST", QStringLiteral("/sim/callback-targets"),
                                        {{QStringLiteral("urls"), QJsonArray{m_receiver.url("/extra/{channel}")}}});
    QCOMPARE(targets.value(u"wechat").toArray().size(), 1);
    QCOMPARE(targets.value(u"alipay").toArray().size(), 1);
    const QString outTradeNo = createAndPay(core::Channel::WeChat, m_receiver.url("/wechat"), 700);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.deliveries.size(), 2, 10000);
    QCOMPARE(m_receiver.at("/wechat").size(), 1);
    QCOMPARE(m_receiver.at("/extra/wechat").size(), 1);
    QCOMPARE(m_receiver.at("/extra/wechat").first().body, m_receiver.at("/wechat").first().body);
    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"acknowledged").toBool(), 5000);
    QCOMPARE(notification(outTradeNo).value(u"targets").toArray().size(), 2);

    // A gateway replay: the same bytes once more, to every target, after the acknowledgement.
    const QJsonObject replayed = control("POST", QStringLiteral("/sim/notifications/") + outTradeNo
                                                     + QStringLiteral("/redeliver"));
    QCOMPARE(replayed.value(u"notifications").toArray().size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.deliveries.size(), 4, 10000);
    const QList<Delivery> atWeChat = m_receiver.at("/wechat");
    QCOMPARE(atWeChat.size(), 2);
    QCOMPARE(atWeChat.at(1).body, atWeChat.at(0).body);
    QCOMPARE(atWeChat.at(1).headers.value("wechatpay-signature"), atWeChat.at(0).headers.value("wechatpay-signature"));
    QCOMPARE(atWeChat.at(1).headers.value("wechatpay-timestamp"), atWeChat.at(0).headers.value("wechatpay-timestamp"));
    QTRY_COMPARE_WITH_TIMEOUT(notification(outTradeNo).value(u"deliveries").toInt(), 4, 5000);
    QCOMPARE(notification(outTradeNo).value(u"redeliveries").toInt(), 1);
    QCOMPARE(notification(outTradeNo).value(u"attempts").toInt(), 1);
    // Nothing sent for an unknown trade.
    QCOMPARE(control("POST", QStringLiteral("/sim/notifications/NOPE/redeliver")).value(u"error").isString(), true);
}

void TestSimNotify::badApiv3KeyIsRefused()
{
    QProcess sim;
    sim.start(QStringLiteral(PAYONCE_SIM_PATH),
              {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--merchant-public-key"),
               fixture("merchant_pub.pem"), QStringLiteral("--apiv3-key"), QStringLiteral("tooShortSecretValue")});
    QVERIFY(sim.waitForFinished(10000));
    QCOMPARE(sim.exitCode(), 1);
    const QByteArray err = sim.readAllStandardError();
    QVERIFY2(err.contains("--apiv3-key"), err.constData());
    QVERIFY(!err.contains("tooShortSecretValue")); // the key never appears in a message
}

void TestSimNotify::wechatRefundNotificationVerifiesAndDecrypts_data()
{
    QTest::addColumn<bool>("refundFails");
    QTest::newRow("success") << false;
    QTest::newRow("refund_fail: closed") << true;
}

void TestSimNotify::wechatRefundNotificationVerifiesAndDecrypts()
{
    QFETCH(bool, refundFails);
    QString payNo;
    const QString outTradeNo = createAndPay(core::Channel::WeChat, m_receiver.url("/wechat"), 9900, &payNo);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.at("/wechat").size(), 1, 10000);
    if (refundFails)
        control("POST", QStringLiteral("/sim/faults"),
                {{QStringLiteral("channel"), QStringLiteral("wechat")}, {QStringLiteral("refund_fail"), true}});
    const QString refundNo = refund(core::Channel::WeChat, outTradeNo, 2500, 9900, m_receiver.url("/wechat-refund"));
    QVERIFY(!refundNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.at("/wechat-refund").size(), 1, 10000);
    const Delivery d = m_receiver.at("/wechat-refund").first();
    QCOMPARE(d.headers.value("wechatpay-serial"), QByteArray("PAYONCE_SIM_0001"));

    const QString folder = writeWeChatDelivery(d, QStringLiteral("wechat-refund-%1").arg(refundFails));
    const QJsonObject checked = runPython(kWeChatCheck, folder);
    QVERIFY2(!checked.isEmpty(),
             "the refund notification's signature or resource did not verify with python3-cryptography");
    const QJsonObject n = checked.value(u"notification").toObject();
    QCOMPARE(n.value(u"event_type").toString(),
             refundFails ? QStringLiteral("REFUND.CLOSED") : QStringLiteral("REFUND.SUCCESS"));
    const QJsonObject resource = n.value(u"resource").toObject();
    QCOMPARE(resource.value(u"original_type").toString(), QStringLiteral("refund"));
    QCOMPARE(resource.value(u"associated_data").toString(), QStringLiteral("refund"));
    const QJsonObject r = checked.value(u"transaction").toObject(); // the decrypted resource
    QCOMPARE(r.value(u"out_refund_no").toString(), refundNo);
    QCOMPARE(r.value(u"out_trade_no").toString(), outTradeNo);
    QCOMPARE(r.value(u"transaction_id").toString(), payNo);
    QCOMPARE(r.value(u"mchid").toString(), kMchid);
    QCOMPARE(r.value(u"refund_status").toString(), refundFails ? QStringLiteral("CLOSED") : QStringLiteral("SUCCESS"));
    QVERIFY(!r.value(u"refund_id").toString().isEmpty());
    QCOMPARE(r.value(u"amount").toObject().value(u"refund").toInteger(), 2500);
    QCOMPARE(r.value(u"amount").toObject().value(u"total").toInteger(), 9900);
    QCOMPARE(r.contains(u"success_time"), !refundFails);

    // payonce's refund verifier accepts exactly what the platform sent.
    core::RawDelivery raw;
    raw.channel = core::Channel::WeChat;
    for (auto it = d.headers.cbegin(); it != d.headers.cend(); ++it)
        raw.headers.append({it.key(), it.value()});
    raw.body = d.body;
    const auto verified = simVerifier().verifyRefund(raw, true, QDateTime::currentMSecsSinceEpoch());
    QVERIFY2(verified.ok(), qPrintable(verified.ok() ? QString() : verified.error().internalMessage));
    QCOMPARE(verified->refundNo, refundNo);
    QCOMPARE(verified->refundId, r.value(u"refund_id").toString());
    QCOMPARE(verified->payNo, payNo);
    QCOMPARE(verified->amountFen, std::optional<qint64>(2500));
    QCOMPARE(verified->state,
             refundFails ? core::RefundNotification::State::Closed : core::RefundNotification::State::Success);
    // ... and the payment verifier does not take it for a payment.
    QVERIFY(!simVerifier().verify(raw, true, QDateTime::currentMSecsSinceEpoch()).ok());

    QTRY_VERIFY_WITH_TIMEOUT(refundNotification(outTradeNo, refundNo).value(u"acknowledged").toBool(), 5000);
    const QJsonObject state = refundNotification(outTradeNo, refundNo);
    QCOMPARE(state.value(u"refund_state").toString(),
             refundFails ? QStringLiteral("CLOSED") : QStringLiteral("SUCCESS"));
    QCOMPARE(state.value(u"attempts").toInt(), 1);
    QCOMPARE(state.value(u"max_attempts").toInt(), 16);
}

void TestSimNotify::alipayRefundNotificationVerifiesWithOpenssl()
{
    QString payNo;
    const QString outTradeNo = createAndPay(core::Channel::Alipay, m_receiver.url("/alipay"), 9900, &payNo);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.at("/alipay").size(), 1, 10000);
    // Two partial refunds: the first leaves the trade open, the second closes it.
    const QString first = refund(core::Channel::Alipay, outTradeNo, 2500, 9900, m_receiver.url("/alipay-refund"));
    QVERIFY(!first.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.at("/alipay-refund").size(), 1, 10000);
    const QString second = refund(core::Channel::Alipay, outTradeNo, 7400, 9900, m_receiver.url("/alipay-refund"));
    QVERIFY(!second.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver.at("/alipay-refund").size(), 2, 10000);

    const QList<Delivery> deliveries = m_receiver.at("/alipay-refund");
    const struct {
        QString refundNo;
        const char *refundFee;
        const char *tradeStatus;
    } expected[] = {{first, "25.00", "TRADE_SUCCESS"}, {second, "99.00", "TRADE_CLOSED"}};
    for (int i = 0; i < 2; ++i) {
        const QString folder = m_dir.filePath(QStringLiteral("alipay-refund%1").arg(i));
        QVERIFY(QDir().mkpath(folder));
        QFile form(folder + QStringLiteral("/form"));
        QVERIFY(form.open(QIODevice::WriteOnly));
        form.write(deliveries.at(i).body);
        form.close();
        const QJsonObject fields = runPython(kAlipayPrepare, folder);
        QVERIFY(!fields.isEmpty());
        QVERIFY2(alipaySignVerifies(folder), "openssl refused the refund notify's sign");
        QCOMPARE(fields.value(u"notify_type").toString(), QStringLiteral("trade_status_sync"));
        QCOMPARE(fields.value(u"out_biz_no").toString(), expected[i].refundNo);
        QCOMPARE(fields.value(u"refund_fee").toString(), QLatin1String(expected[i].refundFee));
        QCOMPARE(fields.value(u"trade_status").toString(), QLatin1String(expected[i].tradeStatus));
        QCOMPARE(fields.value(u"out_trade_no").toString(), outTradeNo);
        QCOMPARE(fields.value(u"trade_no").toString(), payNo);
        QCOMPARE(fields.value(u"total_amount").toString(), QStringLiteral("99.00"));
        QCOMPARE(fields.value(u"seller_id").toString(), kSellerId);
        QVERIFY(!fields.value(u"gmt_refund").toString().isEmpty());

        core::RawDelivery raw;
        raw.channel = core::Channel::Alipay;
        raw.body = deliveries.at(i).body;
        const auto verified = simVerifier().verifyRefund(raw, true, QDateTime::currentMSecsSinceEpoch());
        QVERIFY2(verified.ok(), qPrintable(verified.ok() ? QString() : verified.error().internalMessage));
        QCOMPARE(verified->refundNo, expected[i].refundNo);
        QCOMPARE(verified->refundedTotalFen, std::optional<qint64>(i == 0 ? 2500 : 9900));
        QCOMPARE(verified->totalFen, 9900);
    }
    QTRY_VERIFY_WITH_TIMEOUT(refundNotification(outTradeNo, second).value(u"acknowledged").toBool(), 5000);
    QCOMPARE(refundNotification(outTradeNo, second).value(u"max_attempts").toInt(), 8);
}

void TestSimNotify::refundNotificationsAreRetriedUntilAcknowledged_data()
{
    QTest::addColumn<core::Channel>("channel");
    QTest::newRow("wechat") << core::Channel::WeChat;
    QTest::newRow("alipay") << core::Channel::Alipay;
}

void TestSimNotify::refundNotificationsAreRetriedUntilAcknowledged()
{
    QFETCH(core::Channel, channel);
    const bool wechat = channel == core::Channel::WeChat;
    // WeChat 15 s 15 s, Alipay 4 min 10 min, scaled down to well under a second each.
    control("POST", QStringLiteral("/sim/notify-config"), {{QStringLiteral("time_scale"), wechat ? 0.005 : 0.0005}});
    const QString outTradeNo = createAndPay(channel, m_receiver.url(wechat ? "/wechat" : "/alipay"), 1500);
    QVERIFY(!outTradeNo.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(notification(outTradeNo).value(u"acknowledged").toBool(), 10000);
    // The next two deliveries (the refund's first two attempts) are refused.
    m_receiver.failFirst = static_cast<int>(m_receiver.deliveries.size()) + 2;
    const char *path = wechat ? "/wechat-refund" : "/alipay-refund";
    const QString refundNo = refund(channel, outTradeNo, 1500, 1500, m_receiver.url(path));
    QVERIFY(!refundNo.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(refundNotification(outTradeNo, refundNo).value(u"acknowledged").toBool(), 20000);
    const QList<Delivery> deliveries = m_receiver.at(path);
    QCOMPARE(deliveries.size(), 3);
    if (wechat) {
        QCOMPARE(deliveries.at(2).body, deliveries.at(0).body); // the same notification, re-signed
        QVERIFY(deliveries.at(2).headers.value("wechatpay-nonce") != deliveries.at(0).headers.value("wechatpay-nonce"));
    }
    const QJsonObject state = refundNotification(outTradeNo, refundNo);
    QCOMPARE(state.value(u"attempts").toInt(), 3);
    QCOMPARE(state.value(u"state").toString(), QStringLiteral("acknowledged"));
    QCOMPARE(state.value(u"history").toArray().size(), 3);
    // The payment's notification was not sent again by the refund's retries.
    QCOMPARE(notification(outTradeNo).value(u"attempts").toInt(), 1);
    QCOMPARE(m_receiver.at(wechat ? "/wechat" : "/alipay").size(), 1);
}

QTEST_GUILESS_MAIN(TestSimNotify)
#include "tst_simnotify.moc"
