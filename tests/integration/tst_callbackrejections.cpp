// Bad input on the callback path, over real HTTP, on each dialect: a forged
// signature, an unknown serial, a stale or future timestamp, ... → the contract's 4xx FAIL,
// no business row written, a counter moved.
//
// The real payonce-agent runs WITHOUT payonce-sim: its WeChat platform keys are the
// committed fixture keys (tests/fixtures/notifications, serials PLATFORM_SERIAL_A/B), its
// APIv3 key, mchid/appid and Alipay public key/app_id/seller_id those of the fixtures.
// Every notification is signed at test time, with the current timestamp, by an
// independent tool: /usr/bin/python3 tests/fixtures/notifications/sign-now.py
// (python3-cryptography), never by payonce's own signer.
//
// How the pipeline finds the order: SqlCallbackStore::findOrderForPayment looks the
// notification's out_trade_no up in payment_records and, when no payment record has it,
// takes it as the order_no itself. The agent has no gateway here (no simulator, no real
// platform), so no order is confirmed: the signed notifications carry the order_no as
// out_trade_no and no payment record is needed (or inserted).
//
// One table: each row is one delivery. For each: status and body (WeChat
// {"code":"FAIL"}, Alipay "failure"), X-Payonce-Layer, no business row (orders' status,
// stock, stock_log, user_coupon, point_log, outbox, pay_callback_log unchanged), one
// callback_deliveries row (the counter that moves; raw_body NULL when unverified) and its
// error_code, printed; for a merchant or amount mismatch the amount_mismatch finding. The
// last rows are valid notifications, signed now: 200 SUCCESS and the order PAID, which
// proves the set-up the refusals ran against was able to pay; the very last carries empty
// parameters (`body=`), signed as Alipay signs them, and pays an order of its own.

#include "agentfixture.h"
#include "storagefixture.h"

#include "sql/session.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

const QString kFixtures = QStringLiteral(PAYONCE_FIXTURES_DIR "/notifications");
const QString kWeChatOrder = QStringLiteral("ORD-REJ-WX");
const QString kAlipayOrder = QStringLiteral("ORD-REJ-ALI");
/// Paid by a notification carrying empty parameters (`body=`), as Alipay sends them.
const QString kAlipayEmptyOrder = QStringLiteral("ORD-REJ-ALI-EMPTY");

struct Signed {
    QString error;
    Headers headers;
    QByteArray body;
};

/// The independent signer: one case, signed now.
Signed signNow(const QString &caseName, const QString &orderNo, const QString &payNo)
{
    Signed out;
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"),
                 {kFixtures + QStringLiteral("/sign-now.py"), caseName, QStringLiteral("--order-no"), orderNo,
                  QStringLiteral("--pay-no"), payNo, QStringLiteral("--amount-fen"), QStringLiteral("9900")});
    if (!python.waitForFinished(30000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
        out.error =
            QStringLiteral("sign-now.py %1 failed: %2").arg(caseName, QString::fromUtf8(python.readAllStandardError()));
        return out;
    }
    const QJsonObject made = QJsonDocument::fromJson(python.readAllStandardOutput()).object();
    const QJsonObject headers = made.value(QStringLiteral("headers")).toObject();
    for (auto it = headers.begin(); it != headers.end(); ++it) {
        // httpCall sets its own Content-Type (application/json); the agent does not look
        // at it (deliveryOf only records it), so the signer's is left out rather than doubled.
        if (it.key().compare(QStringLiteral("Content-Type"), Qt::CaseInsensitive) == 0)
            continue;
        out.headers.append({it.key().toLatin1(), it.value().toString().toLatin1()});
    }
    out.body = QByteArray::fromBase64(made.value(QStringLiteral("body_b64")).toString().toLatin1());
    if (out.body.isEmpty())
        out.error = QStringLiteral("sign-now.py %1 printed no body").arg(caseName);
    return out;
}

} // namespace

class TestCallbackRejections : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        // The merchant's own private keys: the agent only needs them to exist (they sign
        // requests to the platform, which this test never makes). Freshly generated.
        QVERIFY(m_keys.isValid());
        const QString merchantKey = m_keys.filePath(QStringLiteral("merchant.pem"));
        QProcess openssl;
        openssl.start(QStringLiteral("openssl"),
                      {QStringLiteral("genrsa"), QStringLiteral("-out"), merchantKey, QStringLiteral("2048")});
        QVERIFY(openssl.waitForFinished(60000));
        QVERIFY2(openssl.exitCode() == 0, openssl.readAllStandardError().constData());

        const QJsonObject cases = QJsonDocument::fromJson([] {
                                      QFile file(kFixtures + QStringLiteral("/cases.json"));
                                      return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
                                  }())
                                      .object();
        QVERIFY2(!cases.isEmpty(), "tests/fixtures/notifications/cases.json not readable");
        QJsonArray platformKeys;
        const QJsonObject serials = cases.value(QStringLiteral("platform_keys")).toObject();
        for (auto it = serials.begin(); it != serials.end(); ++it)
            platformKeys.append(QJsonObject{
                {QStringLiteral("serial"), it.key()},
                {QStringLiteral("public_key"), QString(kFixtures + QLatin1Char('/') + it.value().toString())}});
        QCOMPARE(platformKeys.size(), 2);

        AgentProcess::Options options;
        options.sim = false;
        // The fixtures' keys are refused at start unless this says the run is a test's.
        options.environment << QStringLiteral("PAYONCE_ALLOW_REPOSITORY_TEST_KEYS=1");
        options.extraConfig = QJsonObject{
            {QStringLiteral("wechat"),
             QJsonObject{{QStringLiteral("mchid"), cases.value(QStringLiteral("mchid"))},
                         {QStringLiteral("appid"), cases.value(QStringLiteral("appid"))},
                         {QStringLiteral("apiv3_key"), cases.value(QStringLiteral("apiv3_key"))},
                         {QStringLiteral("merchant_private_key"), merchantKey},
                         {QStringLiteral("merchant_serial"), QStringLiteral("PAYONCE_TEST_MERCHANT")},
                         {QStringLiteral("platform_keys"), platformKeys}}},
            {QStringLiteral("alipay"),
             QJsonObject{{QStringLiteral("app_id"), cases.value(QStringLiteral("alipay_app_id"))},
                         {QStringLiteral("seller_id"), cases.value(QStringLiteral("alipay_seller_id"))},
                         {QStringLiteral("private_key"), merchantKey},
                         {QStringLiteral("alipay_public_key"),
                          QString(kFixtures + QLatin1Char('/')
                                  + cases.value(QStringLiteral("alipay_public_key")).toString())}}},
        };
        QVERIFY2(m_agent.start(options), m_agent.error());
        QString error;

        // Orders of 99.00 (9900 fen, what sign-now.py signs), each of one unit of its own
        // SKU (stock 100), with a coupon and points as rewards: every side effect a
        // payment would make has a table to be counted in.
        QVERIFY2(m_agent->createOrder(kWeChatOrder, 42, QStringLiteral("99.00"), QStringLiteral("SKU-REJ-WX"), &error),
                 qPrintable(error));
        QVERIFY2(m_agent->createOrder(kAlipayOrder, 43, QStringLiteral("99.00"), QStringLiteral("SKU-REJ-ALI"), &error),
                 qPrintable(error));
        QVERIFY2(m_agent->createOrder(kAlipayEmptyOrder, 44, QStringLiteral("99.00"),
                                      QStringLiteral("SKU-REJ-ALI-EMPTY"), &error),
                 qPrintable(error));
        QCOMPARE(orderStatus(kWeChatOrder), QStringLiteral("PENDING"));
        QCOMPARE(orderStatus(kAlipayOrder), QStringLiteral("PENDING"));
    }
    void cleanupTestCase() { m_agent.stop(); }

    void badInputIsRefused_data()
    {
        QTest::addColumn<QString>("caseName"); // sign-now.py's case, or "wechat_10mb_body"
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("errorCode"); // callback_deliveries.error_code; empty: no row
        QTest::addColumn<int>("verified");      // callback_deliveries.verified
        QTest::addColumn<bool>("finding");      // an amount_mismatch finding for this pay_no
        QTest::addColumn<bool>("pays");         // the valid rows: 200 and the order PAID
        // A defect of the agent against docs/openapi.yaml, kept visible: the check named here is
        // expected to fail (QEXPECT_FAIL) with this reason, file:line.
        QTest::addColumn<QString>("defectCheck");
        QTest::addColumn<QString>("defectReason");

        auto row = [](const char *name, int status, const char *errorCode, int verified, bool finding = false,
                      bool pays = false, const char *defectCheck = "", const char *defectReason = "") {
            QTest::newRow(name) << QString::fromLatin1(name) << status << QString::fromLatin1(errorCode) << verified
                                << finding << pays << QString::fromLatin1(defectCheck)
                                << QString::fromLatin1(defectReason);
        };
        // Authenticity (401): signature, serial, the ±300 s window, decryption.
        row("wechat_forged_signature", 401, "bad_signature", 0);
        row("wechat_unknown_serial", 401, "bad_signature", 0);
        row("wechat_stale_timestamp", 401, "bad_signature",
            0); // signed now - 360 s (a minute past the window: no timing margin)
        row("wechat_future_timestamp", 401, "bad_signature", 0);    // signed now + 360 s
        row("wechat_tampered_ciphertext", 401, "bad_signature", 0); // GCM refuses it
        row("wechat_wrong_associated_data", 401, "bad_signature", 0);
        // Malformed input (400).
        row("wechat_truncated_body", 400, "invalid_input", 0); // cut after signing
        row("wechat_invalid_json", 400, "invalid_input", 0);
        // A 10 MB body never reaches the route: the connection guard answers 413
        // payload_too_large from the Content-Length (docs/openapi.yaml: a body over 64 KiB), layer
        // rejected, so no delivery is recorded (the guard's own payloadTooLarge count
        // moves; /metrics, which will show it, is not served yet).
        row("wechat_10mb_body", 413, "", 0);
        row("wechat_pay_no_bad_chars", 400, "invalid_input", 0); // "42000/../../etc"
        // Verified, but not ours or not what the order says: 400 and a finding.
        row("wechat_wrong_mchid", 400, "amount_mismatch", 1, true);
        row("wechat_amount_mismatch", 400, "amount_mismatch", 1, true);
        // Verified, but not paid: refused as bad input (400, layer rejected), nothing paid.
        row("wechat_notpay", 400, "not_paid", 1);
        row("alipay_wait_buyer_pay", 400, "not_paid", 1);
        row("alipay_trade_closed", 400, "not_paid", 1);
        row("alipay_forged_signature", 401, "bad_signature", 0);
        row("alipay_amount_mismatch", 400, "amount_mismatch", 1, true);
        // Alipay signs a notification's empty parameters too: a signature over the content
        // without them (the way requests are signed) is not the platform's.
        row("alipay_empty_parameter_left_out_of_the_signature", 401, "bad_signature", 0);
        // The set-up is right: the same keys, order and amounts pay.
        row("wechat_valid", 200, "processed", 1, false, true);
        row("alipay_valid", 200, "processed", 1, false, true);
        // `body=` and `passback_params=` sent and signed as Alipay does: paid (its own order).
        row("alipay_valid_empty_parameters", 200, "processed", 1, false, true);
    }
    void badInputIsRefused()
    {
        QFETCH(QString, caseName);
        QFETCH(int, status);
        QFETCH(QString, errorCode);
        QFETCH(int, verified);
        QFETCH(bool, finding);
        QFETCH(bool, pays);
        QFETCH(QString, defectCheck);
        QFETCH(QString, defectReason);
        const QByteArray defectComment = defectReason.toUtf8();
        auto expectDefect = [&](const char *check) { return defectCheck == QLatin1String(check); };

        const bool alipay = caseName.startsWith(u"alipay_");
        const QString orderNo = caseName == u"alipay_valid_empty_parameters" ? kAlipayEmptyOrder
                                : alipay                                     ? kAlipayOrder
                                                                             : kWeChatOrder;
        // Each row its own pay_no: findings are unique per (kind, channel:pay_no) and a
        // pay_no already logged would be a duplicate, not a refusal.
        const QString payNo = (alipay ? QStringLiteral("2026112922") : QStringLiteral("4200000000"))
                              + QString::number(++m_serial).rightJustified(8, QLatin1Char('0'));

        Signed made;
        if (caseName == u"wechat_10mb_body") {
            // A validly signed notification padded to 10 MB: only the size is wrong.
            made = signNow(QStringLiteral("wechat_valid"), orderNo, payNo);
            made.body += QByteArray(10 * 1024 * 1024 - made.body.size(), ' ');
        } else {
            made = signNow(caseName, orderNo, payNo);
        }
        QVERIFY2(made.error.isEmpty(), qPrintable(made.error));

        const Snapshot before = snapshot(orderNo);
        const qint64 lastDelivery = m_agent.count("SELECT COALESCE(MAX(id), 0) FROM callback_deliveries");
        const qint64 findingsBefore = m_agent.count(
            "SELECT COUNT(*) FROM findings WHERE kind = 'amount_mismatch' AND pay_no = ?", {payNo});

        const HttpAnswer answer = m_agent->call(
            "POST", QStringLiteral("/api/v1/callbacks/") + (alipay ? u"alipay" : u"wechat"), made.body, made.headers);
        const QString got = describe(answer);

        // Status and body as the contract says.
        if (expectDefect("status"))
            QEXPECT_FAIL("", defectComment.constData(), Continue);
        QVERIFY2(answer.status == status, qPrintable(got));
        if (status == 413) {
            QVERIFY2(answer.errorCode() == u"payload_too_large", qPrintable(got));
        } else if (alipay) {
            QVERIFY2(answer.body == (pays ? QByteArray("success") : QByteArray("failure")), qPrintable(got));
        } else {
            const QJsonObject body = answer.json();
            QVERIFY2(body.value(QStringLiteral("code")).toString() == (pays ? u"SUCCESS" : u"FAIL"), qPrintable(got));
            QVERIFY2(!body.value(QStringLiteral("message")).toString().isEmpty(), qPrintable(got));
        }
        if (expectDefect("layer"))
            QEXPECT_FAIL("", defectComment.constData(), Continue);
        QVERIFY2(answer.header("X-Payonce-Layer") == (pays ? QByteArray("none") : QByteArray("rejected")),
                 qPrintable(got));

        // The counter that moved: one callback_deliveries row (none for the guard's 413).
        const qint64 recorded = m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE id > ?", {lastDelivery});
        QCOMPARE(recorded, errorCode.isEmpty() ? qint64(0) : qint64(1));
        if (!errorCode.isEmpty()) {
            const QStringList d = latestDelivery();
            QVERIFY2(d.size() == 7, "no delivery row readable");
            qInfo("%s: HTTP %d layer=%s; callback_deliveries: verified=%s layer=%s http_status=%s error_code=%s "
                  "raw_body_null=%s",
                  qPrintable(caseName), answer.status, answer.header("X-Payonce-Layer").constData(), qPrintable(d[0]),
                  qPrintable(d[1]), qPrintable(d[2]), qPrintable(d[3]), qPrintable(d[4]));
            QCOMPARE(d[0].toInt(), verified);
            QCOMPARE(d[1], pays ? QStringLiteral("none") : QStringLiteral("rejected"));
            QCOMPARE(d[2].toInt(), status);
            QCOMPARE(d[3], errorCode);
            // Unverified: metadata only, neither body nor headers kept.
            QCOMPARE(d[4], verified ? QStringLiteral("0") : QStringLiteral("1"));
            if (!verified)
                QCOMPARE(d[5], QStringLiteral("1"));
            else
                QCOMPARE(d[6], orderNo);
        } else {
            qInfo("%s: HTTP %d layer=%s %s; no callback_deliveries row (refused by the connection guard)",
                  qPrintable(caseName), answer.status, answer.header("X-Payonce-Layer").constData(),
                  answer.body.constData());
        }

        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM findings WHERE kind = 'amount_mismatch' AND pay_no = ?", {payNo}),
                 findingsBefore + (finding ? 1 : 0));

        const Snapshot after = snapshot(orderNo);
        if (pays) {
            QCOMPARE(after.status, QStringLiteral("PAID"));
            QCOMPARE(after.stock, before.stock - 1);
            QCOMPARE(after.stockLog, before.stockLog + 1);
            QCOMPARE(after.coupons, before.coupons + 1);
            QCOMPARE(after.points, before.points + 1);
            QCOMPARE(after.outbox, before.outbox + 1);
            QCOMPARE(after.callbackLog, before.callbackLog + 1);
            QCOMPARE(m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND pay_no = ?", {orderNo, payNo}),
                     qint64(1));
        } else {
            // No business row written, anywhere.
            QCOMPARE(after.status, before.status);
            QCOMPARE(after.status, QStringLiteral("PENDING"));
            QCOMPARE(after.paidOrders, before.paidOrders);
            QCOMPARE(after.stock, before.stock);
            QCOMPARE(after.stockLog, before.stockLog);
            QCOMPARE(after.coupons, before.coupons);
            QCOMPARE(after.points, before.points);
            QCOMPARE(after.outbox, before.outbox);
            QCOMPARE(after.callbackLog, before.callbackLog);
        }
    }

    // Alipay sends a trade's refund notifications to its notify_url too. A validly signed
    // one for a paid-looking trade (TRADE_SUCCESS, the order's amount) must reach the refund
    // handler, not pay the order: answered as a refund nobody asked for (400 failure, no
    // such refund), no callback_deliveries row, the order still PENDING.
    void anAlipayRefundOnThePaymentUrlIsARefunds()
    {
        const QString orderNo = QStringLiteral("ORD-REJ-ALI-REFUND");
        QString error;
        QVERIFY2(m_agent->createOrder(orderNo, 45, QStringLiteral("99.00"), QStringLiteral("SKU-REJ-ALI-RF"), &error),
                 qPrintable(error));
        const QString payNo = QStringLiteral("2026112933") + QString::number(++m_serial).rightJustified(8, u'0');
        const Signed made = signNow(QStringLiteral("alipay_refund_of_the_trade"), orderNo, payNo);
        QVERIFY2(made.error.isEmpty(), qPrintable(made.error));
        const Snapshot before = snapshot(orderNo);
        const qint64 lastDelivery = m_agent.count("SELECT COALESCE(MAX(id), 0) FROM callback_deliveries");

        const HttpAnswer answer = m_agent->call("POST", QStringLiteral("/api/v1/callbacks/alipay"), made.body,
                                                made.headers);
        QVERIFY2(answer.status == 400 && answer.body == "failure", qPrintable(describe(answer)));
        QCOMPARE(answer.header("X-Payonce-Layer"), QByteArray("rejected"));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM callback_deliveries WHERE id > ?", {lastDelivery}), qint64(0));
        const Snapshot after = snapshot(orderNo);
        QCOMPARE(after.status, QStringLiteral("PENDING"));
        QCOMPARE(after.stockLog, before.stockLog);
        QCOMPARE(after.callbackLog, before.callbackLog);
    }

private:
    struct Snapshot {
        QString status;
        qint64 paidOrders = 0;
        qint64 stock = 0;
        qint64 stockLog = 0;
        qint64 coupons = 0;
        qint64 points = 0;
        qint64 outbox = 0;
        qint64 callbackLog = 0;
    };

    Snapshot snapshot(const QString &orderNo)
    {
        Snapshot s;
        s.status = orderStatus(orderNo);
        s.paidOrders = m_agent.count("SELECT COUNT(*) FROM orders WHERE status = 'PAID'");
        s.stock = m_agent.count("SELECT COALESCE(SUM(stock), 0) FROM skus");
        s.stockLog = m_agent.count("SELECT COUNT(*) FROM stock_log");
        s.coupons = m_agent.count("SELECT COUNT(*) FROM user_coupon");
        s.points = m_agent.count("SELECT COUNT(*) FROM point_log");
        s.outbox = m_agent.count("SELECT COUNT(*) FROM outbox");
        s.callbackLog = m_agent.count("SELECT COUNT(*) FROM pay_callback_log");
        return s;
    }

    QString orderStatus(const QString &orderNo)
    {
        auto read = m_agent.database().read([&](sql::Session &session) -> core::Result<QString> {
            auto query = session.exec(QStringLiteral("SELECT status FROM orders WHERE order_no = ?"), {orderNo});
            if (!query)
                return query.error();
            return query.value().next() ? query.value().value(0).toString() : QString();
        });
        return read ? read.value() : QStringLiteral("<%1>").arg(read.error().internalMessage);
    }

    /// verified, layer, http_status, error_code, raw_body IS NULL, headers IS NULL, order_no
    /// of the newest callback_deliveries row.
    QStringList latestDelivery()
    {
        auto read = m_agent.database().read([&](sql::Session &session) -> core::Result<QStringList> {
            auto query = session.exec(QStringLiteral(
                "SELECT verified, layer, http_status, error_code, CASE WHEN raw_body IS NULL THEN 1 ELSE 0 END, "
                "CASE WHEN headers IS NULL THEN 1 ELSE 0 END, order_no FROM callback_deliveries "
                "WHERE id = (SELECT MAX(id) FROM callback_deliveries)"));
            if (!query)
                return query.error();
            QStringList out;
            if (query.value().next()) {
                for (int i = 0; i < 7; ++i)
                    out.append(query.value().value(i).toString());
            }
            return out;
        });
        return read ? read.value() : QStringList();
    }

    QTemporaryDir m_keys;
    AgentFixture m_agent;
    int m_serial = 0;
};

QTEST_GUILESS_MAIN(TestCallbackRejections)
#include "tst_callbackrejections.moc"
