// SetupService and its JSON codec over a fake OrderRepository: the rules of docs/openapi.yaml
// "Orders and stock" decided before any storage call, the mapping of repository answers
// (Duplicate → order_exists, absent → order_not_found / sku_not_found, failures →
// Storage), and the ownership check the payment routes use (invalid_user,
// order_not_yours).

#include "core/orders/setupcodec.h"
#include "core/orders/setupservice.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace payonce::core;

namespace {

class FakeRepository final : public OrderRepository {
public:
    Result<void> createOrder(const OrderDraft &order) override
    {
        ++calls;
        if (failure)
            return *failure;
        if (orders.contains(order.orderNo))
            return Error::make(ErrorCode::Duplicate, QStringLiteral("orders pk"), QStringLiteral("already exists"));
        OrderDetail detail;
        detail.orderNo = order.orderNo;
        detail.userId = order.userId;
        detail.amountFen = order.amountFen;
        detail.items = order.items;
        orders.insert(order.orderNo, detail);
        return {};
    }
    Result<SkuStock> setSkuStock(const QString &skuId, qint64 stock) override
    {
        ++calls;
        if (failure)
            return *failure;
        skus.insert(skuId, stock);
        return SkuStock{skuId, stock};
    }
    Result<std::optional<SkuStock>> skuStock(const QString &skuId) override
    {
        ++calls;
        if (failure)
            return *failure;
        if (!skus.contains(skuId))
            return std::optional<SkuStock>();
        return std::optional<SkuStock>(SkuStock{skuId, skus.value(skuId)});
    }
    Result<std::optional<OrderDetail>> orderDetail(const QString &orderNo) override
    {
        ++calls;
        if (failure)
            return *failure;
        if (!orders.contains(orderNo))
            return std::optional<OrderDetail>();
        return std::optional<OrderDetail>(orders.value(orderNo));
    }

    QHash<QString, OrderDetail> orders;
    QHash<QString, qint64> skus;
    std::optional<Error> failure;
    int calls = 0;
};

OrderDraft validDraft()
{
    OrderDraft order;
    order.orderNo = QStringLiteral("ORD001");
    order.userId = 10086;
    order.amountFen = 9900;
    order.items = {{QStringLiteral("SKU1"), 1}};
    return order;
}

QJsonObject validBody()
{
    return QJsonObject{
        {QStringLiteral("order_no"), QStringLiteral("ORD001")},
        {QStringLiteral("user_id"), 10086},
        {QStringLiteral("amount"), QStringLiteral("99.00")},
        {QStringLiteral("items"),
         QJsonArray{QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("SKU1")}, {QStringLiteral("qty"), 2}}}},
    };
}

} // namespace

class TestSetupService : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void businessIds_data();
    void businessIds();
    void draftRules_data();
    void draftRules();
    void createOrderMapsRepositoryAnswers();
    void skuStock();
    void orderOfUser();
    void decodeOrderDraft_data();
    void decodeOrderDraft();
    void decodeOptionalFields();
    void encodeOrderDetail();
};

void TestSetupService::businessIds_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<bool>("valid");
    QTest::newRow("plain") << QStringLiteral("ORD001") << true;
    QTest::newRow("all classes") << QStringLiteral("aZ09_-") << true;
    QTest::newRow("64") << QString(64, u'x') << true;
    QTest::newRow("65") << QString(65, u'x') << false;
    QTest::newRow("empty") << QString() << false;
    QTest::newRow("space") << QStringLiteral("A B") << false;
    QTest::newRow("dot") << QStringLiteral("A.B") << false;
    QTest::newRow("slash") << QStringLiteral("A/B") << false;
    QTest::newRow("non-ASCII letter") << QStringLiteral("ORD\u00e9") << false;
    QTest::newRow("full-width digit") << QStringLiteral("ORD\uff11") << false;
}

void TestSetupService::businessIds()
{
    QFETCH(QString, id);
    QFETCH(bool, valid);
    QCOMPARE(isValidBusinessId(id), valid);
}

void TestSetupService::draftRules_data()
{
    QTest::addColumn<int>("breakage");
    QTest::addColumn<int>("code"); // SetupErrorCode; -1: valid
    QTest::addColumn<QString>("field");
    QTest::newRow("valid") << 0 << -1 << QString();
    QTest::newRow("order_no") << 1 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("order_no");
    QTest::newRow("user_id") << 2 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("user_id");
    QTest::newRow("amount") << 3 << int(SetupErrorCode::InvalidAmount) << QStringLiteral("amount");
    QTest::newRow("no items") << 4 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("items");
    QTest::newRow("qty") << 5 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("items[0].qty");
    QTest::newRow("duplicate sku") << 6 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("items[1].sku_id");
    QTest::newRow("coupon") << 7 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("reward_coupon_template");
    QTest::newRow("points") << 8 << int(SetupErrorCode::InvalidRequest) << QStringLiteral("reward_points");
}

void TestSetupService::draftRules()
{
    QFETCH(int, breakage);
    QFETCH(int, code);
    QFETCH(QString, field);
    OrderDraft order = validDraft();
    switch (breakage) {
    case 1: order.orderNo = QStringLiteral("ORD 1"); break;
    case 2: order.userId = 0; break;
    case 3: order.amountFen = 0; break;
    case 4: order.items.clear(); break;
    case 5: order.items[0].qty = 0; break;
    case 6: order.items.append({QStringLiteral("SKU1"), 3}); break;
    case 7: order.rewardCouponTemplate = QString(); break;
    case 8: order.rewardPoints = -1; break;
    default: break;
    }
    FakeRepository repository;
    SetupService service(repository);
    const auto created = service.createOrder(order);
    if (code < 0) {
        QVERIFY(created.ok());
        QCOMPARE(repository.calls, 1);
        return;
    }
    QVERIFY(!created.ok());
    QCOMPARE(int(created.error().code), code);
    QVERIFY2(created.error().message.contains(QStringLiteral("\"%1\"").arg(field)),
             qPrintable(created.error().message));
    QCOMPARE(repository.calls, 0); // refused before any storage call
}

void TestSetupService::createOrderMapsRepositoryAnswers()
{
    FakeRepository repository;
    SetupService service(repository);
    OrderDraft order = validDraft();
    order.items = {{QStringLiteral("SKU2"), 1}, {QStringLiteral("SKU1"), 4}};
    order.rewardCouponTemplate = QStringLiteral("WELCOME10");
    order.rewardPoints = 100;

    const auto created = service.createOrder(order);
    QVERIFY(created.ok());
    QCOMPARE(created.value().status, OrderStatus::Pending);
    QCOMPARE(created.value().version, 0);
    QCOMPARE(created.value().amountFen, 9900);
    QCOMPARE(created.value().rewardCouponTemplate, std::optional<QString>(QStringLiteral("WELCOME10")));
    // Items come back ordered by SKU, as the detail view reads them.
    QCOMPARE(created.value().items, (QList<OrderItem>{{QStringLiteral("SKU1"), 4}, {QStringLiteral("SKU2"), 1}}));

    const auto again = service.createOrder(order);
    QVERIFY(!again.ok());
    QCOMPARE(again.error().code, SetupErrorCode::OrderExists);
    QCOMPARE(setupErrorName(again.error().code), QStringLiteral("order_exists"));
    QVERIFY(again.error().message.contains(QStringLiteral("ORD001")));

    repository.failure = Error::make(ErrorCode::Unavailable, QStringLiteral("connection refused"),
                                     QStringLiteral("the database is unavailable"));
    order.orderNo = QStringLiteral("ORD002");
    const auto down = service.createOrder(order);
    QVERIFY(!down.ok());
    QCOMPARE(down.error().code, SetupErrorCode::Storage);
    QCOMPARE(down.error().cause.code, ErrorCode::Unavailable);
    QVERIFY(!down.error().message.contains(QStringLiteral("refused"))); // the public text only
}

void TestSetupService::skuStock()
{
    FakeRepository repository;
    SetupService service(repository);
    QCOMPARE(service.setSkuStock(QStringLiteral("SKU1"), 100).value(), (SkuStock{QStringLiteral("SKU1"), 100}));
    QCOMPARE(service.setSkuStock(QStringLiteral("SKU1"), 0).value(), (SkuStock{QStringLiteral("SKU1"), 0}));
    QCOMPARE(service.skuStock(QStringLiteral("SKU1")).value().stock, 0);

    const int callsBefore = repository.calls;
    const auto negative = service.setSkuStock(QStringLiteral("SKU1"), -1);
    QCOMPARE(negative.error().code, SetupErrorCode::InvalidRequest);
    QVERIFY(negative.error().message.contains(QStringLiteral("\"stock\"")));
    QCOMPARE(service.setSkuStock(QStringLiteral("SKU 1"), 1).error().code, SetupErrorCode::InvalidRequest);
    QCOMPARE(repository.calls, callsBefore);

    const auto unknown = service.skuStock(QStringLiteral("SKU9"));
    QCOMPARE(unknown.error().code, SetupErrorCode::SkuNotFound);
    QCOMPARE(setupErrorName(unknown.error().code), QStringLiteral("sku_not_found"));
}

void TestSetupService::orderOfUser()
{
    FakeRepository repository;
    SetupService service(repository);
    QVERIFY(service.createOrder(validDraft()).ok());

    const auto mine = service.orderOfUser(QStringLiteral("ORD001"), 10086);
    QVERIFY(mine.ok());
    QCOMPARE(mine.value().orderNo, QStringLiteral("ORD001"));

    const auto theirs = service.orderOfUser(QStringLiteral("ORD001"), 10087);
    QCOMPARE(theirs.error().code, SetupErrorCode::OrderNotYours);
    QCOMPARE(setupErrorName(theirs.error().code), QStringLiteral("order_not_yours"));

    for (const qint64 bad : {qint64(0), qint64(-1)}) {
        const auto invalid = service.orderOfUser(QStringLiteral("ORD001"), bad);
        QCOMPARE(invalid.error().code, SetupErrorCode::InvalidUser);
        QCOMPARE(setupErrorName(invalid.error().code), QStringLiteral("invalid_user"));
    }

    const auto unknown = service.orderOfUser(QStringLiteral("ORD404"), 10086);
    QCOMPARE(unknown.error().code, SetupErrorCode::OrderNotFound);
    QCOMPARE(setupErrorName(unknown.error().code), QStringLiteral("order_not_found"));

    QCOMPARE(service.orderDetail(QStringLiteral("ORD/1")).error().code, SetupErrorCode::InvalidRequest);
}

void TestSetupService::decodeOrderDraft_data()
{
    QTest::addColumn<QString>("key");      // the field changed ("" = none)
    QTest::addColumn<QJsonValue>("value"); // undefined: removed
    QTest::addColumn<int>("code");         // -1: decodes
    QTest::addColumn<QString>("field");
    const int invalid = int(SetupErrorCode::InvalidRequest);
    const int amount = int(SetupErrorCode::InvalidAmount);
    QTest::newRow("valid") << QString() << QJsonValue() << -1 << QString();
    QTest::newRow("order_no missing") << QStringLiteral("order_no") << QJsonValue(QJsonValue::Undefined) << invalid
                                      << QStringLiteral("order_no");
    QTest::newRow("order_no null") << QStringLiteral("order_no") << QJsonValue(QJsonValue::Null) << invalid
                                   << QStringLiteral("order_no");
    QTest::newRow("order_no number") << QStringLiteral("order_no") << QJsonValue(1) << invalid
                                     << QStringLiteral("order_no");
    QTest::newRow("user_id string") << QStringLiteral("user_id") << QJsonValue(QStringLiteral("1")) << invalid
                                    << QStringLiteral("user_id");
    QTest::newRow("user_id 1.5") << QStringLiteral("user_id") << QJsonValue(1.5) << invalid
                                 << QStringLiteral("user_id");
    QTest::newRow("user_id 2^60") << QStringLiteral("user_id") << QJsonValue(qint64(1) << 60) << invalid
                                  << QStringLiteral("user_id");
    QTest::newRow("amount missing") << QStringLiteral("amount") << QJsonValue(QJsonValue::Undefined) << invalid
                                    << QStringLiteral("amount");
    QTest::newRow("amount number") << QStringLiteral("amount") << QJsonValue(99.0) << amount
                                   << QStringLiteral("amount");
    QTest::newRow("amount bool") << QStringLiteral("amount") << QJsonValue(true) << amount << QStringLiteral("amount");
    QTest::newRow("amount 3 places") << QStringLiteral("amount") << QJsonValue(QStringLiteral("1.234")) << amount
                                     << QStringLiteral("amount");
    QTest::newRow("amount zero") << QStringLiteral("amount") << QJsonValue(QStringLiteral("0")) << amount
                                 << QStringLiteral("amount");
    QTest::newRow("items object") << QStringLiteral("items") << QJsonValue(QJsonObject()) << invalid
                                  << QStringLiteral("items");
    QTest::newRow("items[0] string") << QStringLiteral("items") << QJsonValue(QJsonArray{QStringLiteral("SKU1")})
                                     << invalid << QStringLiteral("items[0]");
    QTest::newRow("items[0].qty string") << QStringLiteral("items")
                                         << QJsonValue(
                                                QJsonArray{QJsonObject{{QStringLiteral("sku_id"), QStringLiteral("S")},
                                                                       {QStringLiteral("qty"), QStringLiteral("1")}}})
                                         << invalid << QStringLiteral("items[0].qty");
    QTest::newRow("reward_points string") << QStringLiteral("reward_points") << QJsonValue(QStringLiteral("1"))
                                          << invalid << QStringLiteral("reward_points");
    QTest::newRow("reward_coupon_template number") << QStringLiteral("reward_coupon_template") << QJsonValue(5)
                                                   << invalid << QStringLiteral("reward_coupon_template");
}

void TestSetupService::decodeOrderDraft()
{
    QFETCH(QString, key);
    QFETCH(QJsonValue, value);
    QFETCH(int, code);
    QFETCH(QString, field);
    QJsonObject body = validBody();
    if (!key.isEmpty()) {
        if (value.isUndefined())
            body.remove(key);
        else
            body.insert(key, value);
    }
    const auto decoded = setupcodec::decodeOrderDraft(body);
    if (code < 0) {
        QVERIFY(decoded.ok());
        QCOMPARE(decoded.value().amountFen, 9900);
        QCOMPARE(decoded.value().items, (QList<OrderItem>{{QStringLiteral("SKU1"), 2}}));
        QVERIFY(!decoded.value().rewardCouponTemplate);
        QCOMPARE(decoded.value().rewardPoints, 0);
        return;
    }
    QVERIFY(!decoded.ok());
    QCOMPARE(int(decoded.error().code), code);
    QVERIFY2(decoded.error().message.contains(QStringLiteral("\"%1\"").arg(field)),
             qPrintable(decoded.error().message));
}

void TestSetupService::decodeOptionalFields()
{
    QJsonObject body = validBody();
    body.insert(QStringLiteral("reward_coupon_template"), QStringLiteral("WELCOME10"));
    body.insert(QStringLiteral("reward_points"), 100);
    body.insert(QStringLiteral("amount"), QStringLiteral("0.5"));
    const auto decoded = setupcodec::decodeOrderDraft(body);
    QVERIFY(decoded.ok());
    QCOMPARE(decoded.value().rewardCouponTemplate, std::optional<QString>(QStringLiteral("WELCOME10")));
    QCOMPARE(decoded.value().rewardPoints, 100);
    QCOMPARE(decoded.value().amountFen, 50);

    QCOMPARE(setupcodec::decodeStock(QJsonObject{{QStringLiteral("stock"), 7}}).value(), 7);
    QCOMPARE(setupcodec::decodeStock(QJsonObject{{QStringLiteral("stock"), 7.5}}).error().code,
             SetupErrorCode::InvalidRequest);
    QVERIFY(setupcodec::decodeStock(QJsonObject{}).error().message.contains(QStringLiteral("\"stock\"")));
}

void TestSetupService::encodeOrderDetail()
{
    OrderDetail order;
    order.orderNo = QStringLiteral("ORD001");
    order.userId = 10086;
    order.amountFen = 9900;
    order.status = OrderStatus::Paid;
    order.version = 3;
    order.payNo = QStringLiteral("WX1");
    order.items = {{QStringLiteral("SKU1"), 1}};
    order.payments = {PaymentRecord{
        QStringLiteral("PN1"), QStringLiteral("ORD001"), Channel::Alipay, PaymentRecordStatus::Paid, 1, 9900, {}, {}}};
    order.stock = {{QStringLiteral("SKU1"), 1}};
    order.coupons = {{QStringLiteral("WELCOME10"), QStringLiteral("frozen")}};
    order.points = {{QStringLiteral("reward"), 100}};
    order.findings = {
        OrderFinding{1, QStringLiteral("oversold"), QStringLiteral("open"), {}, QStringLiteral("not json"), 1, 0, 0}};
    const QJsonObject json = setupcodec::encodeOrderDetail(order);
    QCOMPARE(json.value(QStringLiteral("amount")).toString(), QStringLiteral("99.00"));
    QCOMPARE(json.value(QStringLiteral("status")).toString(), QStringLiteral("PAID"));
    QCOMPARE(json.value(QStringLiteral("pay_no")).toString(), QStringLiteral("WX1"));
    QVERIFY(json.value(QStringLiteral("reward_coupon_template")).isNull());
    const QJsonObject payment = json.value(QStringLiteral("payments")).toArray().at(0).toObject();
    QCOMPARE(payment.value(QStringLiteral("channel")).toString(), QStringLiteral("alipay"));
    QCOMPARE(payment.value(QStringLiteral("amount")).toString(), QStringLiteral("99.00"));
    QVERIFY(payment.value(QStringLiteral("code_url")).isNull());
    const QJsonObject effects = json.value(QStringLiteral("effects")).toObject();
    QCOMPARE(effects.keys(),
             (QStringList{QStringLiteral("coupons"), QStringLiteral("points"), QStringLiteral("stock")}));
    QCOMPARE(
        effects.value(QStringLiteral("coupons")).toArray().at(0).toObject().value(QStringLiteral("status")).toString(),
        QStringLiteral("frozen"));
    const QJsonObject finding = json.value(QStringLiteral("findings")).toArray().at(0).toObject();
    QCOMPARE(finding.value(QStringLiteral("evidence")).toString(), QStringLiteral("not json"));
    QCOMPARE(finding.value(QStringLiteral("first_seen_at")).toString(), QStringLiteral("1970-01-01T00:00:00.000Z"));
    // Money is never a JSON number in the output.
    QVERIFY(!QJsonDocument(json).toJson(QJsonDocument::Compact).contains("9900"));
}

QTEST_GUILESS_MAIN(TestSetupService)
#include "tst_setupservice.moc"
