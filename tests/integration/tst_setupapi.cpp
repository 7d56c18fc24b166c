// The set-up API (docs/openapi.yaml, "Orders and stock") end to end, once per dialect: an in-process
// payonce::http::HttpServer (on a thread of its own, so the test can use blocking
// sockets) with registerSetupRoutes() over SetupService over SqlOrderRepository on a
// migrated database, driven over real HTTP with bearer tokens "viewer-token" and
// "operator-token". Happy paths, then every common error of the contract as its own row,
// each checking the error body's shape and that no row of orders, order_items or skus
// was written.

#include "httptestsupport.h"
#include "storagefixture.h"

#include "core/orders/setupservice.h"
#include "http/authenticator.h"
#include "http/httpserver.h"
#include "http/setuproutes.h"
#include "sql/sqlorderrepository.h"

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>

#include <atomic>
#include <condition_variable>
#include <mutex>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

const QByteArray kViewer = "viewer-token";
const QByteArray kOperator = "operator-token";
const QByteArray kNoToken;

/// HttpServer with the set-up routes, living on its own thread's event loop.
class SetupServerThread {
public:
    ~SetupServerThread() { stop(); }

    bool start(core::SetupService &service, QString *error)
    {
        m_thread.reset(QThread::create([this, &service] { run(service); }));
        m_thread->start();
        std::unique_lock lock(m_mutex);
        m_ready.wait(lock, [this] { return m_started; });
        if (m_port == 0)
            *error = m_error;
        return m_port != 0;
    }

    void stop()
    {
        if (!m_thread)
            return;
        {
            std::lock_guard lock(m_mutex);
            if (m_loop)
                QMetaObject::invokeMethod(
                    m_loop, [loop = m_loop] { loop->quit(); }, Qt::QueuedConnection);
        }
        m_thread->wait();
        m_thread.reset();
    }

    int port() const { return m_port; }

private:
    void run(core::SetupService &service)
    {
        http::HttpServer::Options options;
        options.workerThreads = 4;
        options.authFailuresPerWindow = 10'000; // the 401 rows must not trip the limiter
        const QList<config::AuthToken> tokens{
            {QStringLiteral("vera"), QStringLiteral("viewer"),
             config::Secret(QString::fromLatin1(http::sha256Hex(kViewer)))},
            {QStringLiteral("otto"), QStringLiteral("operator"),
             config::Secret(QString::fromLatin1(http::sha256Hex(kOperator)))},
        };
        http::HttpServer server(options, http::Authenticator(tokens));
        http::registerSetupRoutes(server, service);
        const auto listening = server.listen(QHostAddress::LocalHost, 0);
        QEventLoop loop;
        {
            std::lock_guard lock(m_mutex);
            m_started = true;
            if (listening) {
                m_port = *listening;
                m_loop = &loop;
            } else {
                m_error = listening.error().internalMessage;
            }
        }
        m_ready.notify_all();
        if (!listening)
            return;
        loop.exec();
        server.drain(std::chrono::seconds(5));
        std::lock_guard lock(m_mutex);
        m_loop = nullptr;
    }

    std::unique_ptr<QThread> m_thread;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    bool m_started = false;
    int m_port = 0;
    QString m_error;
    QEventLoop *m_loop = nullptr;
};

QByteArray request(const QByteArray &method, const QByteArray &path, const QByteArray &token,
                   const QByteArray &body = {})
{
    QByteArray out = method + ' ' + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n";
    if (!token.isEmpty())
        out += "Authorization: Bearer " + token + "\r\n";
    if (method != "GET")
        out += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    return out + "\r\n" + body;
}

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

/// The contract's order body, with `change` applied (a null value removes the field).
QByteArray orderBody(const QString &orderNo, const QJsonObject &change = {})
{
    QJsonObject body{
        {QStringLiteral("order_no"), orderNo},
        {QStringLiteral("user_id"), 10086},
        {QStringLiteral("amount"), QStringLiteral("99.00")},
        {QStringLiteral("items"),
         QJsonArray{QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("SKU1")}, {QStringLiteral("qty"), 1}}}},
        {QStringLiteral("reward_coupon_template"), QStringLiteral("WELCOME10")},
        {QStringLiteral("reward_points"), 100},
    };
    for (auto it = change.begin(); it != change.end(); ++it) {
        if (it.value().isNull())
            body.remove(it.key());
        else
            body.insert(it.key(), it.value());
    }
    return json(body);
}

QJsonArray items(std::initializer_list<QJsonObject> lines)
{
    QJsonArray out;
    for (const QJsonObject &line : lines)
        out.append(line);
    return out;
}

QJsonObject item(const QJsonValue &skuId, const QJsonValue &qty)
{
    QJsonObject out;
    if (!skuId.isNull())
        out.insert(QStringLiteral("sku_id"), skuId);
    if (!qty.isNull())
        out.insert(QStringLiteral("qty"), qty);
    return out;
}

struct Counts {
    qint64 orders = -1;
    qint64 items = -1;
    qint64 skus = -1;
    bool operator==(const Counts &) const = default;
};

char *toString(const Counts &c)
{
    return qstrdup(QByteArray("orders " + QByteArray::number(c.orders) + ", order_items " + QByteArray::number(c.items)
                              + ", skus " + QByteArray::number(c.skus))
                       .constData());
}

} // namespace

class TestSetupApi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void skuStockUpsert();
    void createAndReadOrder();
    void orderDetailShowsPaymentsEffectsAndFindings();
    void concurrentCreatesOneWins();
    void errors_data();
    void errors();

private:
    QByteArray exchange(const QByteArray &raw) { return httpExchange(m_server.port(), raw); }
    Counts counts();

    MigratedDatabase m_db;
    std::unique_ptr<sql::SqlOrderRepository> m_repository;
    std::unique_ptr<core::SetupService> m_service;
    SetupServerThread m_server;
};

void TestSetupApi::initTestCase()
{
    QString error;
    m_db = MigratedDatabase::start(dialectUnderTest(), &error);
    QVERIFY2(m_db,
             qPrintable(QStringLiteral("cannot get a %1 database: %2").arg(dialectName(dialectUnderTest()), error)));
    m_repository = std::make_unique<sql::SqlOrderRepository>(*m_db.database);
    m_service = std::make_unique<core::SetupService>(*m_repository);
    QVERIFY2(m_server.start(*m_service, &error), qPrintable(error));

    // The order that the order_exists row collides with, and a SKU.
    QCOMPARE(httpStatusOf(exchange(request("PUT", "/api/v1/skus/SKU1", kOperator, "{\"stock\":100}"))), 200);
    QCOMPARE(
        httpStatusOf(exchange(request("POST", "/api/v1/orders", kOperator, orderBody(QStringLiteral("ORD-EXISTS"))))),
        201);
}

void TestSetupApi::cleanupTestCase()
{
    m_server.stop();
}

Counts TestSetupApi::counts()
{
    return Counts{countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM orders")),
                  countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM order_items")),
                  countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM skus"))};
}

void TestSetupApi::skuStockUpsert()
{
    const QByteArray put = exchange(request("PUT", "/api/v1/skus/SKU-UP_1", kOperator, "{\"stock\":100}"));
    QCOMPARE(httpStatusOf(put), 200);
    QCOMPARE(QJsonDocument::fromJson(httpBodyOf(put)).object(),
             (QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("SKU-UP_1")}, {QStringLiteral("stock"), 100}}));

    const QByteArray get = exchange(request("GET", "/api/v1/skus/SKU-UP_1", kViewer));
    QCOMPARE(httpStatusOf(get), 200);
    QCOMPARE(QJsonDocument::fromJson(httpBodyOf(get)).object().value(QStringLiteral("stock")).toInteger(), 100);

    // PUT again replaces the stock (an upsert), no second row; 0 is a valid stock.
    QCOMPARE(httpStatusOf(exchange(request("PUT", "/api/v1/skus/SKU-UP_1", kOperator, "{\"stock\":0}"))), 200);
    const QByteArray again = exchange(request("GET", "/api/v1/skus/SKU-UP_1", kOperator));
    QCOMPARE(QJsonDocument::fromJson(httpBodyOf(again)).object().value(QStringLiteral("stock")).toInteger(), 0);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM skus WHERE sku_id = ?"),
                       {QStringLiteral("SKU-UP_1")}),
             1);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM skus WHERE sku_id = ? AND stock = 0"),
                       {QStringLiteral("SKU-UP_1")}),
             1);
}

void TestSetupApi::createAndReadOrder()
{
    const QByteArray body = orderBody(
        QStringLiteral("ORD001"),
        {{QStringLiteral("items"), items({item(QStringLiteral("SKU2"), 3), item(QStringLiteral("SKU1"), 1)})}});
    const QByteArray created = exchange(request("POST", "/api/v1/orders", kOperator, body));
    QCOMPARE(httpStatusOf(created), 201);
    const QJsonObject createdBody = QJsonDocument::fromJson(httpBodyOf(created)).object();
    QCOMPARE(createdBody.value(QStringLiteral("order_no")).toString(), QStringLiteral("ORD001"));
    QCOMPARE(createdBody.value(QStringLiteral("status")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(createdBody.value(QStringLiteral("amount")).toString(), QStringLiteral("99.00"));

    QCOMPARE(countRows(*m_db.database,
                       QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = ? AND amount_fen = 9900 "
                                      "AND status = 'PENDING' AND reward_points = 100"),
                       {QStringLiteral("ORD001")}),
             1);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM order_items WHERE order_no = ?"),
                       {QStringLiteral("ORD001")}),
             2);

    const QByteArray read = exchange(request("GET", "/api/v1/orders/ORD001", kViewer));
    QCOMPARE(httpStatusOf(read), 200);
    const QJsonObject order = QJsonDocument::fromJson(httpBodyOf(read)).object();
    const QJsonObject expected{
        {QStringLiteral("order_no"), QStringLiteral("ORD001")},
        {QStringLiteral("user_id"), 10086},
        {QStringLiteral("amount"), QStringLiteral("99.00")},
        {QStringLiteral("status"), QStringLiteral("PENDING")},
        {QStringLiteral("version"), 0},
        {QStringLiteral("pay_no"), QJsonValue::Null},
        {QStringLiteral("items"), items({item(QStringLiteral("SKU1"), 1), item(QStringLiteral("SKU2"), 3)})},
        {QStringLiteral("reward_coupon_template"), QStringLiteral("WELCOME10")},
        {QStringLiteral("reward_points"), 100},
        {QStringLiteral("payments"), QJsonArray()},
        {QStringLiteral("effects"), QJsonObject{{QStringLiteral("stock"), QJsonArray()},
                                                {QStringLiteral("coupons"), QJsonArray()},
                                                {QStringLiteral("points"), QJsonArray()}}},
        {QStringLiteral("findings"), QJsonArray()},
    };
    QCOMPARE(order, expected);
    // The 201 body is the same view GET gives right after.
    QCOMPARE(createdBody, expected);

    // Optional fields may be left out.
    const QByteArray bare = orderBody(QStringLiteral("ORD002"),
                                      {{QStringLiteral("reward_coupon_template"), QJsonValue::Null},
                                       {QStringLiteral("reward_points"), QJsonValue::Null}});
    const QByteArray createdBare = exchange(request("POST", "/api/v1/orders", kOperator, bare));
    QCOMPARE(httpStatusOf(createdBare), 201);
    const QJsonObject bareBody = QJsonDocument::fromJson(httpBodyOf(createdBare)).object();
    QVERIFY(bareBody.value(QStringLiteral("reward_coupon_template")).isNull());
    QCOMPARE(bareBody.value(QStringLiteral("reward_points")).toInteger(), 0);
}

void TestSetupApi::orderDetailShowsPaymentsEffectsAndFindings()
{
    QCOMPARE(httpStatusOf(exchange(request("POST", "/api/v1/orders", kOperator, orderBody(QStringLiteral("ORD-FX"))))),
             201);
    // What the callback path and the patrol write (other engineers' code), put in directly.
    auto written = m_db.database->write([](sql::Session &session) -> core::Result<void> {
        const QStringList statements{
            QStringLiteral(
                "UPDATE orders SET status = 'PAID', version = 2, pay_no = 'WXPAY0001' WHERE order_no = 'ORD-FX'"),
            QStringLiteral("INSERT INTO payment_records (payment_no, order_no, channel, status, attempt, amount_fen, "
                           "code_url, created_at, updated_at) VALUES ('PN-FX', 'ORD-FX', 'wechat', 'paid', 2, 9900, "
                           "'weixin:pay?pr=abc', 1, 2)"),
            QStringLiteral(
                "INSERT INTO stock_log (order_no, sku_id, qty, fence, created_at) VALUES ('ORD-FX', 'SKU1', 1, 7, 3)"),
            QStringLiteral(
                "INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, updated_at) "
                "VALUES ('ORD-FX', 10086, 'WELCOME10', 'active', 7, 3, 3)"),
            QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                           "VALUES ('ORD-FX', 10086, 'reward', 100, 7, 3)"),
            QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
                           "VALUES ('ORD-FX', 10086, 'reward_reversal', -100, 8, 4)"),
            QStringLiteral("INSERT INTO findings (kind, subject, order_no, pay_no, evidence, status, seen_count, "
                           "first_seen_at, last_seen_at) VALUES ('double_payment', 'ORD-FX:WXPAY0002', 'ORD-FX', "
                           "'WXPAY0002', '{\"amount_fen\":9900}', 'open', 2, 0, 1000)"),
        };
        for (const QString &statement : statements) {
            auto done = session.exec(statement);
            if (!done)
                return done.error();
        }
        return {};
    });
    QVERIFY2(written.ok(), qPrintable(written.ok() ? QString() : written.error().internalMessage));

    const QByteArray read = exchange(request("GET", "/api/v1/orders/ORD-FX", kViewer));
    QCOMPARE(httpStatusOf(read), 200);
    const QJsonObject order = QJsonDocument::fromJson(httpBodyOf(read)).object();
    QCOMPARE(order.value(QStringLiteral("status")).toString(), QStringLiteral("PAID"));
    QCOMPARE(order.value(QStringLiteral("version")).toInteger(), 2);
    QCOMPARE(order.value(QStringLiteral("pay_no")).toString(), QStringLiteral("WXPAY0001"));

    const QJsonArray payments = order.value(QStringLiteral("payments")).toArray();
    QCOMPARE(payments.size(), 1);
    const QJsonObject payment = payments.at(0).toObject();
    QCOMPARE(payment.value(QStringLiteral("payment_no")).toString(), QStringLiteral("PN-FX"));
    QCOMPARE(payment.value(QStringLiteral("channel")).toString(), QStringLiteral("wechat"));
    QCOMPARE(payment.value(QStringLiteral("status")).toString(), QStringLiteral("paid"));
    QCOMPARE(payment.value(QStringLiteral("attempt")).toInteger(), 2);
    QCOMPARE(payment.value(QStringLiteral("amount")).toString(), QStringLiteral("99.00"));
    QCOMPARE(payment.value(QStringLiteral("code_url")).toString(), QStringLiteral("weixin:pay?pr=abc"));

    const QJsonObject effects = order.value(QStringLiteral("effects")).toObject();
    QCOMPARE(effects.value(QStringLiteral("stock")).toArray(), items({item(QStringLiteral("SKU1"), 1)}));
    QCOMPARE(effects.value(QStringLiteral("coupons")).toArray(),
             (QJsonArray{QJsonObject{{QStringLiteral("template_id"), QStringLiteral("WELCOME10")},
                                     {QStringLiteral("status"), QStringLiteral("active")}}}));
    QCOMPARE(effects.value(QStringLiteral("points")).toArray(),
             (QJsonArray{
                 QJsonObject{{QStringLiteral("point_type"), QStringLiteral("reward")}, {QStringLiteral("delta"), 100}},
                 QJsonObject{{QStringLiteral("point_type"), QStringLiteral("reward_reversal")},
                             {QStringLiteral("delta"), -100}}}));

    const QJsonArray findings = order.value(QStringLiteral("findings")).toArray();
    QCOMPARE(findings.size(), 1);
    const QJsonObject finding = findings.at(0).toObject();
    QCOMPARE(finding.value(QStringLiteral("kind")).toString(), QStringLiteral("double_payment"));
    QCOMPARE(finding.value(QStringLiteral("status")).toString(), QStringLiteral("open"));
    QCOMPARE(finding.value(QStringLiteral("pay_no")).toString(), QStringLiteral("WXPAY0002"));
    QCOMPARE(finding.value(QStringLiteral("seen_count")).toInteger(), 2);
    QCOMPARE(finding.value(QStringLiteral("evidence")).toObject().value(QStringLiteral("amount_fen")).toInteger(),
             9900);
    QCOMPARE(finding.value(QStringLiteral("last_seen_at")).toString(), QStringLiteral("1970-01-01T00:00:01.000Z"));
}

void TestSetupApi::concurrentCreatesOneWins()
{
    // The primary key decides, not a prior read: of 16 simultaneous creates of one
    // order_no exactly one is 201, the others 409 order_exists, and one set of items exists.
    constexpr int kThreads = 16;
    const QByteArray body = orderBody(
        QStringLiteral("ORD-RACE"),
        {{QStringLiteral("items"), items({item(QStringLiteral("SKU1"), 1), item(QStringLiteral("SKU2"), 2)})}});
    const QByteArray raw = request("POST", "/api/v1/orders", kOperator, body);
    std::atomic<int> created{0}, exists{0}, other{0};
    const int port = m_server.port();
    runConcurrently(kThreads, [&](int) {
        const QByteArray response = httpExchange(port, raw);
        const int status = httpStatusOf(response);
        if (status == 201)
            ++created;
        else if (status == 409 && httpBodyOf(response).contains("\"code\":\"order_exists\""))
            ++exists;
        else
            ++other;
    });
    QCOMPARE(other.load(), 0);
    QCOMPARE(created.load(), 1);
    QCOMPARE(exists.load(), kThreads - 1);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no = 'ORD-RACE'")), 1);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM order_items WHERE order_no = 'ORD-RACE'")),
             2);
}

void TestSetupApi::errors_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("messageContains");

    const QByteArray orders = "/api/v1/orders";
    auto post = [&](const QByteArray &body, const QByteArray &token = kOperator) {
        return request("POST", orders, token, body);
    };
    auto postChange = [&](const QJsonObject &change) { return post(orderBody(QStringLiteral("ORD-NEW"), change)); };
    const QString invalid = QStringLiteral("invalid_request");
    const QString invalidAmount = QStringLiteral("invalid_amount");

    // Malformed bodies.
    QTest::newRow("malformed JSON") << post("{\"order_no\":") << 400 << invalid << QStringLiteral("JSON");
    QTest::newRow("not an object") << post("[1,2]") << 400 << invalid << QStringLiteral("object");
    QTest::newRow("empty body") << post("") << 400 << invalid << QString();
    QTest::newRow("invalid UTF-8") << post("{\"order_no\":\"\xff\xfe\"}") << 400 << invalid << QStringLiteral("UTF-8");

    // A missing field: the message names it.
    for (const char *field : {"order_no", "user_id", "amount", "items"}) {
        const QString name = QString::fromLatin1(field);
        QTest::addRow("missing %s", field)
            << postChange({{name, QJsonValue::Null}}) << 400 << invalid << QStringLiteral("\"%1\"").arg(name);
    }
    QTest::newRow("missing items[0].sku_id")
        << postChange({{QStringLiteral("items"), items({item(QJsonValue::Null, 1)})}}) << 400 << invalid
        << QStringLiteral("items[0].sku_id");
    QTest::newRow("missing items[1].qty")
        << postChange({{QStringLiteral("items"),
                        items({item(QStringLiteral("SKU1"), 1), item(QStringLiteral("SKU2"), QJsonValue::Null)})}})
        << 400 << invalid << QStringLiteral("items[1].qty");
    QTest::newRow("PUT sku without stock") << request("PUT", "/api/v1/skus/SKU-NEW", kOperator, "{\"stok\":1}") << 400
                                           << invalid << QStringLiteral("\"stock\"");

    // A body over 64 KiB: refused by the connection guard before the route runs.
    const QByteArray big = orderBody(QStringLiteral("ORD-BIG"), {{QStringLiteral("note"), QString(70 * 1024, u'x')}});
    QTest::newRow("body over 64 KiB 413") << post(big) << 413 << QStringLiteral("payload_too_large") << QString();

    // Amounts: a positive decimal string with at most 2 places, never a JSON number.
    for (const char *amount : {"0", "0.00", "-1", "1.234", "abc", "", "1e3", " 1"}) {
        QTest::addRow("amount \"%s\"", amount) << postChange({{QStringLiteral("amount"), QString::fromLatin1(amount)}})
                                               << 400 << invalidAmount << QStringLiteral("amount");
    }
    QTest::newRow("amount 99.0 as a JSON number")
        << postChange({{QStringLiteral("amount"), 99.0}}) << 400 << invalidAmount << QStringLiteral("amount");
    QTest::newRow("amount 99 as a JSON number")
        << postChange({{QStringLiteral("amount"), 99}}) << 400 << invalidAmount << QStringLiteral("amount");

    // order_no and sku_id: 1-64 of [A-Za-z0-9_-].
    for (const QString &orderNo : {QStringLiteral("ORD 1"), QStringLiteral("ORD.1"), QStringLiteral("ORD#1"),
                                   QStringLiteral("ORD\u00e91"), QString(), QString(65, u'A')}) {
        QTest::addRow("order_no \"%s\"", qPrintable(orderNo.left(12)))
            << post(orderBody(orderNo)) << 400 << invalid << QStringLiteral("order_no");
    }
    QTest::newRow("sku_id with a dot") << postChange(
        {{QStringLiteral("items"), items({item(QStringLiteral("SKU.1"), 1)})}})
                                       << 400 << invalid << QStringLiteral("items[0].sku_id");
    QTest::newRow("sku_id of 65") << postChange({{QStringLiteral("items"), items({item(QString(65, u'S'), 1)})}}) << 400
                                  << invalid << QStringLiteral("items[0].sku_id");
    QTest::newRow("PUT sku_id with a bad character")
        << request("PUT", "/api/v1/skus/SKU%2A1", kOperator, "{\"stock\":1}") << 400 << invalid
        << QStringLiteral("sku_id");
    QTest::newRow("PUT sku_id of 65") << request("PUT", "/api/v1/skus/" + QByteArray(65, 'S'), kOperator,
                                                 "{\"stock\":1}")
                                      << 400 << invalid << QStringLiteral("sku_id");
    QTest::newRow("GET order_no of 65") << request("GET", "/api/v1/orders/" + QByteArray(65, 'O'), kViewer) << 400
                                        << invalid << QStringLiteral("order_no");

    // Other field rules.
    QTest::newRow("user_id 0") << postChange({{QStringLiteral("user_id"), 0}}) << 400 << invalid
                               << QStringLiteral("user_id");
    QTest::newRow("user_id negative") << postChange({{QStringLiteral("user_id"), -5}}) << 400 << invalid
                                      << QStringLiteral("user_id");
    QTest::newRow("user_id as a string") << postChange({{QStringLiteral("user_id"), QStringLiteral("10086")}}) << 400
                                         << invalid << QStringLiteral("user_id");
    QTest::newRow("user_id 1.5") << postChange({{QStringLiteral("user_id"), 1.5}}) << 400 << invalid
                                 << QStringLiteral("user_id");
    QTest::newRow("items empty") << postChange({{QStringLiteral("items"), QJsonArray()}}) << 400 << invalid
                                 << QStringLiteral("items");
    QTest::newRow("items not an array") << postChange({{QStringLiteral("items"), QStringLiteral("SKU1")}}) << 400
                                        << invalid << QStringLiteral("items");
    QTest::newRow("qty 0") << postChange({{QStringLiteral("items"), items({item(QStringLiteral("SKU1"), 0)})}}) << 400
                           << invalid << QStringLiteral("items[0].qty");
    QTest::newRow("qty 1.5") << postChange({{QStringLiteral("items"), items({item(QStringLiteral("SKU1"), 1.5)})}})
                             << 400 << invalid << QStringLiteral("items[0].qty");
    QTest::newRow("duplicate sku") << postChange(
        {{QStringLiteral("items"), items({item(QStringLiteral("SKU1"), 1), item(QStringLiteral("SKU1"), 2)})}})
                                   << 400 << invalid << QStringLiteral("items[1].sku_id");
    QTest::newRow("reward_points negative")
        << postChange({{QStringLiteral("reward_points"), -1}}) << 400 << invalid << QStringLiteral("reward_points");
    QTest::newRow("reward_coupon_template bad")
        << postChange({{QStringLiteral("reward_coupon_template"), QStringLiteral("A B")}}) << 400 << invalid
        << QStringLiteral("reward_coupon_template");
    QTest::newRow("stock negative") << request("PUT", "/api/v1/skus/SKU-NEW", kOperator, "{\"stock\":-1}") << 400
                                    << invalid << QStringLiteral("stock");
    QTest::newRow("stock as a string") << request("PUT", "/api/v1/skus/SKU-NEW", kOperator, "{\"stock\":\"5\"}") << 400
                                       << invalid << QStringLiteral("stock");
    QTest::newRow("stock malformed JSON")
        << request("PUT", "/api/v1/skus/SKU-NEW", kOperator, "{stock:5}") << 400 << invalid << QStringLiteral("JSON");

    // Unknown things, existing things.
    QTest::newRow("unknown order 404") << request("GET", "/api/v1/orders/ORD-NOPE", kViewer) << 404
                                       << QStringLiteral("order_not_found") << QStringLiteral("ORD-NOPE");
    QTest::newRow("unknown sku 404") << request("GET", "/api/v1/skus/SKU-NOPE", kViewer) << 404
                                     << QStringLiteral("sku_not_found") << QStringLiteral("SKU-NOPE");
    QTest::newRow("existing order_no 409") << post(orderBody(
        QStringLiteral("ORD-EXISTS"), {{QStringLiteral("items"), items({item(QStringLiteral("SKU-OTHER"), 5)})}}))
                                           << 409 << QStringLiteral("order_exists") << QStringLiteral("ORD-EXISTS");

    // Roles.
    QTest::newRow("viewer on PUT sku 403") << request("PUT", "/api/v1/skus/SKU-NEW", kViewer, "{\"stock\":1}") << 403
                                           << QStringLiteral("forbidden") << QStringLiteral("operator");
    QTest::newRow("viewer on POST order 403") << post(orderBody(QStringLiteral("ORD-NEW")), kViewer) << 403
                                              << QStringLiteral("forbidden") << QStringLiteral("operator");
    QTest::newRow("no token on PUT sku 401") << request("PUT", "/api/v1/skus/SKU-NEW", kNoToken, "{\"stock\":1}") << 401
                                             << QStringLiteral("unauthenticated") << QString();
    QTest::newRow("no token on POST order 401") << post(orderBody(QStringLiteral("ORD-NEW")), kNoToken) << 401
                                                << QStringLiteral("unauthenticated") << QString();
    QTest::newRow("no token on GET order 401") << request("GET", "/api/v1/orders/ORD-EXISTS", kNoToken) << 401
                                               << QStringLiteral("unauthenticated") << QString();
    QTest::newRow("no token on GET sku 401")
        << request("GET", "/api/v1/skus/SKU1", kNoToken) << 401 << QStringLiteral("unauthenticated") << QString();
    QTest::newRow("unknown token on POST order 401") << post(orderBody(QStringLiteral("ORD-NEW")), "wrong-token") << 401
                                                     << QStringLiteral("unauthenticated") << QString();
}

void TestSetupApi::errors()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QString, messageContains);

    const Counts before = counts();
    QVERIFY(before.orders >= 1 && before.items >= 1 && before.skus >= 1);
    const QByteArray response = exchange(request);
    QVERIFY2(httpStatusOf(response) == status, response.constData());

    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(httpBodyOf(response), &parseError);
    QVERIFY2(parseError.error == QJsonParseError::NoError && document.isObject(), response.constData());
    QCOMPARE(document.object().keys(), QStringList{QStringLiteral("error")});
    const QJsonObject error = document.object().value(QStringLiteral("error")).toObject();
    QCOMPARE(error.keys(), (QStringList{QStringLiteral("code"), QStringLiteral("message")}));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), code);
    const QString message = error.value(QStringLiteral("message")).toString();
    QVERIFY2(!message.isEmpty(), response.constData());
    QVERIFY2(message.contains(messageContains), qPrintable(message));
    QVERIFY(httpHeaderOf(response, "x-payonce-layer").isNull());

    QCOMPARE(counts(), before);
    // Nothing of the refused request is anywhere.
    QCOMPARE(countRows(*m_db.database,
                       QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no IN ('ORD-NEW', 'ORD-BIG')")),
             0);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM skus WHERE sku_id = 'SKU-NEW'")), 0);
    QCOMPARE(countRows(*m_db.database, QStringLiteral("SELECT COUNT(*) FROM order_items WHERE sku_id = 'SKU-OTHER'")),
             0);
}

QTEST_GUILESS_MAIN(TestSetupApi)
#include "tst_setupapi.moc"
