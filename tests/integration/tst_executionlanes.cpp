// Callbacks never wait behind the gateway: the real agent and payonce-sim on the database of
// the dialect under test. The platform notifies a relay in this test (public_base_url),
// which keeps each signed notification and answers FAIL; the test then delivers them itself,
// timing each answer.
// - slowGatewayNeverDelaysCallbacks: the simulator answers every WeChat request after 8 s;
//   16 confirms wait on it while 200 paid notifications arrive: each is answered within
//   1 s and every order is PAID.
// - fullCallbackQueueAnswersFailThenDrains: one callback thread and a queue of 2; 100
//   notifications at once: those that do not fit get 503 with WeChat's FAIL and
//   Retry-After, counted; sent again as the platform would, all are paid exactly once.

#include "agentfixture.h"
#include "httptestsupport.h"
#include "notificationrelay.h"
#include "storagefixture.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

constexpr qint64 kUser = 4242;
const QString kSku = QStringLiteral("SKU-LANES");

/// Runs work(i) for i in [0, count) on `threads` threads while the calling thread's event
/// loop runs (the relay lives there).
template <typename Work>
void onThreads(int count, int threads, Work work)
{
    std::atomic<int> next{0};
    std::atomic<int> done{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
                work(i);
                done.fetch_add(1);
            }
        });
    }
    while (done.load() < count)
        QTest::qWait(20);
    for (auto &thread : pool)
        thread.join();
}

QByteArray confirmBody(const QString &token, const QString &orderNo)
{
    return QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                     {QStringLiteral("order_no"), orderNo},
                                     {QStringLiteral("channel"), QStringLiteral("wechat")}})
        .toJson(QJsonDocument::Compact);
}

qint64 percentile(std::vector<qint64> values, double p)
{
    if (values.empty())
        return -1;
    std::sort(values.begin(), values.end());
    const auto index = std::size_t(std::ceil(p * double(values.size()))) - 1;
    return values[std::min(index, values.size() - 1)];
}

} // namespace

class TestExecutionLanes : public QObject {
    Q_OBJECT
private:
    AgentFixture m_fixture; ///< the database; each test starts its own agents on it

    std::unique_ptr<AgentProcess> startAgent(const NotificationRelay &relay, const QJsonObject &http)
    {
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{{QStringLiteral("public_base_url"), relay.baseUrl()},
                                          {QStringLiteral("http"), http}};
        // The platform's own next try comes much later: the test's deliveries are the ones.
        options.simNotifyTimeScale = "20";
        auto agent = m_fixture.startAnother(options);
        if (!agent)
            return nullptr;
        QString skuError;
        if (!agent->putSku(kSku, 100000, &skuError)) {
            qWarning().noquote() << skuError;
            return nullptr;
        }
        return agent;
    }

    /// `n` orders confirmed on WeChat and paid at the simulator; their notifications, as the
    /// relay kept them (in the order they came).
    QList<CapturedRequest> paidNotifications(AgentProcess &agent, NotificationRelay &relay, const QString &prefix,
                                             int n, QStringList *orderNos)
    {
        const qsizetype before = relay.captured.size();
        std::atomic<int> failures{0};
        QStringList names;
        for (int i = 0; i < n; ++i)
            names << QStringLiteral("ORD-%1-%2").arg(prefix).arg(i);
        onThreads(n, 8, [&](int i) {
            QString error;
            QString paymentNo;
            if (agent.postOrder(names.at(i), kUser, QStringLiteral("12.00"), kSku, &error))
                paymentNo = agent.confirmPayment(names.at(i), kUser, QStringLiteral("wechat"), &error);
            const bool paid = !paymentNo.isEmpty() && agent.simPay(QStringLiteral("wechat"), paymentNo).status == 200;
            if (!paid) {
                failures.fetch_add(1);
                qWarning().noquote() << names.at(i) << error;
            }
        });
        if (failures.load() > 0)
            return {};
        QElapsedTimer waited;
        waited.start();
        while (relay.captured.size() < before + n && waited.elapsed() < 30000)
            QTest::qWait(20);
        *orderNos = names;
        return relay.captured.mid(before);
    }

    qint64 paidOrders(const QString &prefix)
    {
        return countRows(m_fixture.database(),
                         QStringLiteral("SELECT COUNT(*) FROM orders WHERE order_no LIKE ? AND status = 'PAID'"),
                         {QString(QStringLiteral("ORD-") + prefix + QStringLiteral("-%"))});
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_fixture.startDatabase(), m_fixture.error()); }

    void slowGatewayNeverDelaysCallbacks()
    {
        NotificationRelay relay;
        auto agent = startAgent(relay, QJsonObject{});
        QVERIFY(agent);
        QStringList paidOrderNos;
        const QList<CapturedRequest> notifications = paidNotifications(*agent, relay, QStringLiteral("SLOW"), 200,
                                                                       &paidOrderNos);
        QCOMPARE(notifications.size(), 200);

        // 16 orders with their payment tokens, to confirm while the gateway is slow.
        QStringList confirmOrders;
        QStringList tokens;
        for (int i = 0; i < 16; ++i) {
            const QString orderNo = QStringLiteral("ORD-SLOWC-%1").arg(i);
            QString error;
            QVERIFY2(agent->postOrder(orderNo, kUser, QStringLiteral("3.00"), kSku, &error), qPrintable(error));
            confirmOrders << orderNo;
            tokens << agent->issueToken(kUser, orderNo);
            QVERIFY(!tokens.last().isEmpty());
        }
        QCOMPARE(agent->simCall("POST", QStringLiteral("/sim/faults"), "{\"channel\":\"wechat\",\"latency_ms\":8000}")
                     .status,
                 200);

        std::vector<int> confirmStatus(16, 0);
        std::vector<qint64> confirmMs(16, 0);
        std::vector<std::thread> confirms;
        const int port = agent->port();
        for (int i = 0; i < 16; ++i) {
            confirms.emplace_back([&, i] {
                QElapsedTimer timer;
                timer.start();
                const HttpAnswer answer = httpCall(
                    port, "POST", QStringLiteral("/api/v1/payments/confirm"),
                    confirmBody(tokens.at(i), confirmOrders.at(i)),
                    {{"X-User-Id", QByteArray::number(kUser)}, {"Idempotency-Key", confirmOrders.at(i).toUtf8()}});
                confirmStatus[std::size_t(i)] = answer.status;
                confirmMs[std::size_t(i)] = timer.elapsed();
            });
        }
        QTest::qWait(1000); // every confirm is waiting on the simulator now

        std::vector<qint64> callbackMs(200, -1);
        std::vector<int> callbackStatus(200, 0);
        QElapsedTimer all;
        all.start();
        onThreads(200, 8, [&](int i) {
            QElapsedTimer timer;
            timer.start();
            callbackStatus[std::size_t(i)] = httpStatusOf(httpExchange(port, replayOf(notifications.at(i)), 20000));
            callbackMs[std::size_t(i)] = timer.elapsed();
        });
        const qint64 callbacksTookMs = all.elapsed();
        for (auto &thread : confirms)
            thread.join();
        QCOMPARE(agent->simCall("POST", QStringLiteral("/sim/faults"), "{\"channel\":\"wechat\"}").status, 200);

        const qint64 slowest = *std::max_element(callbackMs.begin(), callbackMs.end());
        qInfo("200 paid callbacks during 16 confirms on an 8 s gateway: p50 %lld ms, p99 %lld ms, max %lld ms, all in "
              "%lld ms; "
              "confirms %lld..%lld ms",
              percentile(callbackMs, 0.50), percentile(callbackMs, 0.99), slowest, callbacksTookMs,
              *std::min_element(confirmMs.begin(), confirmMs.end()),
              *std::max_element(confirmMs.begin(), confirmMs.end()));
        QCOMPARE(int(std::count(callbackStatus.begin(), callbackStatus.end(), 200)), 200);
        QVERIFY2(slowest < 1000, qPrintable(QStringLiteral("a callback waited %1 ms").arg(slowest)));
        QCOMPARE(paidOrders(QStringLiteral("SLOW")), qint64(200));
        // The confirms themselves finished, each after the simulator's 8 s.
        QCOMPARE(int(std::count(confirmStatus.begin(), confirmStatus.end(), 200)), 16);
        QCOMPARE(agent->stop(), 0);
    }

    void fullCallbackQueueAnswersFailThenDrains()
    {
        NotificationRelay relay;
        auto agent = startAgent(
            relay, QJsonObject{{QStringLiteral("callback_threads"), 1}, {QStringLiteral("callback_queue"), 2}});
        QVERIFY(agent);
        QStringList orderNos;
        const QList<CapturedRequest> notifications = paidNotifications(*agent, relay, QStringLiteral("FULL"), 100,
                                                                       &orderNos);
        QCOMPARE(notifications.size(), 100);
        const int port = agent->port();
        const auto rejectedNow = [&] {
            const auto samples = parseMetricSamples(agent->call("GET", QStringLiteral("/metrics")).body);
            const auto found = samples.find(QStringLiteral("payonce_http_lane_rejected_total{lane=\"callbacks\"}"));
            return found == samples.end() ? -1.0 : found->second;
        };
        const double rejectedBefore = rejectedNow();

        // All 100 at the same instant, each on its own connection.
        std::vector<QByteArray> answers(100);
        {
            std::latch go(100);
            std::vector<std::thread> senders;
            for (int i = 0; i < 100; ++i) {
                senders.emplace_back([&, i] {
                    const QByteArray request = replayOf(notifications.at(i));
                    go.arrive_and_wait();
                    answers[std::size_t(i)] = httpExchange(port, request, 20000);
                });
            }
            for (auto &thread : senders)
                thread.join();
        }
        QList<int> again;
        int paidFirst = 0;
        for (int i = 0; i < 100; ++i) {
            const QByteArray &answer = answers[std::size_t(i)];
            const int status = httpStatusOf(answer);
            if (status == 200) {
                ++paidFirst;
                continue;
            }
            QVERIFY2(status == 503, answer.constData());
            QCOMPARE(QJsonDocument::fromJson(httpBodyOf(answer)).object().value(QStringLiteral("code")).toString(),
                     QStringLiteral("FAIL"));
            QCOMPARE(httpHeaderOf(answer, "retry-after"), QByteArray("1"));
            again << i;
        }
        const double rejected = rejectedNow() - rejectedBefore;
        qInfo(
            "100 notifications at once on 1 callback thread with a queue of 2: %d answered SUCCESS, %lld answered 503 "
            "FAIL; payonce_http_lane_rejected_total{lane=\"callbacks\"} moved by %.0f",
            paidFirst, qint64(again.size()), rejected);
        QVERIFY2(!again.isEmpty(), "the queue never filled");
        QCOMPARE(rejected, double(again.size()));

        // The platform sends the refused ones again: each is paid, nothing lost or doubled.
        for (const int i : std::as_const(again))
            QCOMPARE(httpStatusOf(httpExchange(port, replayOf(notifications.at(i)), 20000)), 200);
        QCOMPARE(paidOrders(QStringLiteral("FULL")), qint64(100));
        for (const QString &orderNo : std::as_const(orderNos)) {
            QCOMPARE(countRows(m_fixture.database(),
                               QStringLiteral(
                                   "SELECT COUNT(*) FROM pay_callback_log WHERE order_no = ? AND status = 'processed'"),
                               {orderNo}),
                     qint64(1));
            QCOMPARE(countRows(m_fixture.database(),
                               QStringLiteral("SELECT COUNT(*) FROM stock_log WHERE order_no = ?"), {orderNo}),
                     qint64(1));
        }
        QCOMPARE(agent->stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestExecutionLanes)
#include "tst_executionlanes.moc"
