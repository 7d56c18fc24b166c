// The outbox dispatcher on a real database, once per dialect: claims are exclusive leases,
// outcomes are recorded only by the claim's holder, dead events are redriven; then three
// dispatchers (threads, each its own id) drain 10 000 rows through a handler that fails
// 30% of calls at random and records every delivery's start and end, while a fourth
// "dispatcher" claimed a batch and died — its rows come back after the lease.

#include "storagefixture.h"

#include "core/outbox/outboxdispatcher.h"
#include "core/ports/clock.h"
#include "sql/sqloutboxstore.h"
#include "webhook/webhookhandler.h"

#include <QElapsedTimer>
#include <QHash>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <mutex>
#include <thread>

using namespace payonce;
using namespace payonce::testsupport;
using core::OutboxEvent;
using core::OutboxOutcome;
using core::OutboxStatus;

namespace {

constexpr int kMaxAttempts = 5;
// Long enough that a scheduling stall on a loaded 2-core CI machine cannot expire a live
// claim (a 1 s lease once did under SQLite's busy handler); the killed dispatcher's rows
// then come back after 5 s.
constexpr qint64 kLeaseMs = 5000;
const QString kEventType = QStringLiteral("test.event");

int rowsFromEnv(const char *name, int otherwise)
{
    const int fromEnv = qEnvironmentVariableIntValue(name);
    return fromEnv > 0 ? fromEnv : otherwise;
}

/// The receiving end's log: per event id every delivery (start and end), its success, and
/// whether another delivery of the same id was in flight at the same time (an overlap).
/// Thread-safe. Fails 30% of deliveries at random.
class DeliveryLog {
public:
    struct Record {
        int calls = 0;
        int successes = 0;
        int inFlight = 0;
        qint64 firstStartMs = -1;
    };

    void start(const QString &eventId)
    {
        std::lock_guard lock(m_mutex);
        Record &r = m_records[eventId];
        if (r.inFlight > 0)
            ++m_overlaps;
        ++r.inFlight;
        ++r.calls;
        if (r.firstStartMs < 0)
            r.firstStartMs = QDateTime::currentMSecsSinceEpoch();
    }
    /// Ends the delivery; returns whether it succeeds (70%).
    bool end(const QString &eventId)
    {
        const bool fail = QRandomGenerator::global()->bounded(100) < 30;
        std::lock_guard lock(m_mutex);
        Record &r = m_records[eventId];
        --r.inFlight;
        if (!fail)
            ++r.successes;
        return !fail;
    }

    QHash<QString, Record> records() const
    {
        std::lock_guard lock(m_mutex);
        return m_records;
    }
    int overlaps() const
    {
        std::lock_guard lock(m_mutex);
        return m_overlaps;
    }

private:
    mutable std::mutex m_mutex;
    QHash<QString, Record> m_records;
    int m_overlaps = 0;
};

/// An in-process handler that logs into a DeliveryLog.
class FlakyRecordingHandler final : public core::OutboxHandler {
public:
    explicit FlakyRecordingHandler(DeliveryLog &log) : m_log(log) {}

    core::Result<void> deliver(const OutboxEvent &event) override
    {
        m_log.start(event.eventId);
        // A delivery takes a little time, so that a second one of the same id would overlap.
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (!m_log.end(event.eventId))
            return core::Error::make(core::ErrorCode::Unavailable, QStringLiteral("receiver said 503"));
        return {};
    }

private:
    DeliveryLog &m_log;
};

/// A webhook receiver on loopback, in a thread of its own: each POST is a delivery of its
/// Idempotency-Key, in flight from the request's arrival until the answer (1 ms later),
/// answered 204 or 503 as the DeliveryLog decides.
class WebhookReceiver {
public:
    explicit WebhookReceiver(DeliveryLog &log) : m_log(log)
    {
        m_context.moveToThread(&m_thread);
        m_thread.start();
        QMetaObject::invokeMethod(
            &m_context,
            [this] {
                m_server = new QTcpServer(&m_context);
                m_server->listen(QHostAddress::LocalHost);
                m_port = m_server->serverPort();
                QObject::connect(m_server, &QTcpServer::newConnection, &m_context, [this] {
                    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
                        QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket] { onData(socket); });
                        QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                    }
                });
            },
            Qt::BlockingQueuedConnection);
    }
    ~WebhookReceiver()
    {
        QMetaObject::invokeMethod(
            &m_context, [this] { delete m_server; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }

    QUrl url() const { return QUrl(QStringLiteral("http://127.0.0.1:%1/hooks/outbox").arg(m_port)); }

private:
    void onData(QTcpSocket *socket)
    {
        QByteArray buffer = socket->property("buffer").toByteArray() + socket->readAll();
        socket->setProperty("buffer", buffer);
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        QByteArray key;
        qsizetype length = 0;
        for (const QByteArray &line : buffer.left(end).split('\n')) {
            const qsizetype colon = line.indexOf(':');
            const QByteArray name = line.left(colon).trimmed().toLower();
            if (name == "idempotency-key")
                key = line.mid(colon + 1).trimmed();
            else if (name == "content-length")
                length = line.mid(colon + 1).trimmed().toLongLong();
        }
        if (buffer.size() < end + 4 + length)
            return;
        socket->setProperty("buffer", QByteArray());
        const QString eventId = QString::fromUtf8(key);
        m_log.start(eventId);
        QTimer::singleShot(1, socket, [this, socket, eventId] {
            const bool ok = m_log.end(eventId);
            socket->write(ok ? QByteArray("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                             : QByteArray("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"));
            socket->disconnectFromHost();
        });
    }

    DeliveryLog &m_log;
    QThread m_thread;
    QObject m_context;
    QTcpServer *m_server = nullptr;
    quint16 m_port = 0;
};

core::OutboxDispatcherOptions testOptions(const QString &id)
{
    core::OutboxDispatcherOptions o;
    o.dispatcherId = id;
    o.batchSize = 50;
    o.claimLease = std::chrono::milliseconds(kLeaseMs);
    o.leaseMargin = std::chrono::milliseconds(1000);
    o.maxAttempts = kMaxAttempts;
    o.backoff = core::RetryOptions{1, std::chrono::milliseconds(2), 2, std::chrono::milliseconds(20), 0.5};
    return o;
}

} // namespace

class TestOutbox : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_db.start(), m_db.error());
        m_store = std::make_unique<sql::SqlOutboxStore>(*m_db.database);
    }

    void init() { QVERIFY(clearOutbox()); }

    void aBatchDeliveredIsMarkedWhateverItsSize()
    {
        // 100 outcomes at once: delivered events are marked by attempt count in id lists
        // (64 + 32 + 4 ids here), each still guarded by its own claim and status.
        QVERIFY(insertRows(101));
        const qint64 now = m_clock.nowMs();
        auto a = m_store->claim(QStringLiteral("A"), 100, now, now + 60000);
        QVERIFY(a.ok());
        QCOMPARE(a->size(), 100);
        auto b = m_store->claim(QStringLiteral("B"), 10, now, now + 60000);
        QVERIFY(b.ok());
        QCOMPARE(b->size(), 1);

        QList<OutboxOutcome> outcomes;
        for (int i = 0; i < 70; ++i)
            outcomes.append({a->at(i).id, OutboxOutcome::Kind::Delivered, 1, 0, {}});
        for (int i = 70; i < 99; ++i)
            outcomes.append({a->at(i).id, OutboxOutcome::Kind::Delivered, 2, 0, {}});
        outcomes.append({a->at(99).id, OutboxOutcome::Kind::Retry, 1, now + 5000, QStringLiteral("receiver 503")});
        // Not A's: left as B claimed it.
        outcomes.append({b->at(0).id, OutboxOutcome::Kind::Delivered, 1, 0, {}});
        auto applied = m_store->complete(QStringLiteral("A"), outcomes, now);
        QVERIFY(applied.ok());
        QCOMPARE(applied.value(), 100);

        auto delivered = m_store->list(OutboxStatus::Delivered, 200);
        QVERIFY(delivered.ok());
        QCOMPARE(delivered->size(), 99);
        int firstAttempt = 0;
        for (const OutboxEvent &event : delivered.value()) {
            QVERIFY(event.deliveredAtMs.has_value());
            QVERIFY(event.claimedBy.isEmpty());
            QVERIFY(event.id != b->at(0).id);
            if (event.attempts == 1)
                ++firstAttempt;
            else
                QCOMPARE(event.attempts, 2);
        }
        QCOMPARE(firstAttempt, 70);
        auto pending = m_store->list(OutboxStatus::Pending, 10);
        QVERIFY(pending.ok());
        QCOMPARE(pending->size(), 2); // the retried one and B's
    }

    void claimsAreExclusiveLeases()
    {
        QVERIFY(insertRows(5));
        const qint64 now = m_clock.nowMs();
        auto a = m_store->claim(QStringLiteral("A"), 3, now, now + 60000);
        QVERIFY(a.ok());
        QCOMPARE(a->size(), 3);
        QCOMPARE(a->at(0).claimedBy, QStringLiteral("A"));
        auto b = m_store->claim(QStringLiteral("B"), 10, now, now + 60000);
        QVERIFY(b.ok());
        QCOMPARE(b->size(), 2);
        auto c = m_store->claim(QStringLiteral("C"), 10, now, now + 60000);
        QVERIFY(c.ok());
        QCOMPARE(c->size(), 0);

        // B's rows are not A's to report.
        auto stale = m_store->complete(QStringLiteral("A"),
                                       {OutboxOutcome{b->at(0).id, OutboxOutcome::Kind::Delivered, 1, 0, {}}}, now);
        QVERIFY(stale.ok());
        QCOMPARE(stale.value(), 0);

        const QList<OutboxOutcome> outcomes{
            {a->at(0).id, OutboxOutcome::Kind::Delivered, 1, 0, {}},
            {a->at(1).id, OutboxOutcome::Kind::Dead, kMaxAttempts, 0, QStringLiteral("receiver said 410")},
            {a->at(2).id, OutboxOutcome::Kind::Released, 0, 0, {}},
        };
        auto applied = m_store->complete(QStringLiteral("A"), outcomes, now);
        QVERIFY(applied.ok());
        QCOMPARE(applied.value(), 3);

        // The released row is claimable again at once; an expired claim (B's, after its
        // lease) too.
        auto again = m_store->claim(QStringLiteral("C"), 10, now + 1, now + 60000);
        QVERIFY(again.ok());
        QCOMPARE(again->size(), 1);
        QCOMPARE(again->at(0).id, a->at(2).id);
        auto reclaimed = m_store->claim(QStringLiteral("C"), 10, now + 60001, now + 120000);
        QVERIFY(reclaimed.ok());
        QCOMPARE(reclaimed->size(), 3);

        auto dead = m_store->list(OutboxStatus::Dead, 10);
        QVERIFY(dead.ok());
        QCOMPARE(dead->size(), 1);
        QCOMPARE(dead->at(0).attempts, kMaxAttempts);
        QCOMPARE(dead->at(0).lastError, QStringLiteral("receiver said 410"));
        auto delivered = m_store->list(OutboxStatus::Delivered, 10);
        QVERIFY(delivered.ok());
        QCOMPARE(delivered->size(), 1);
        QVERIFY(delivered->at(0).deliveredAtMs.has_value());

        auto redriven = m_store->redrive(dead->at(0).id, now);
        QVERIFY2(redriven.ok(), redriven.ok() ? "" : qPrintable(redriven.error().internalMessage));
        QCOMPARE(redriven->status, OutboxStatus::Pending);
        QVERIFY(redriven->redriven);
        QCOMPARE(redriven->attempts, 0);
        QCOMPARE(redriven->lastError, QStringLiteral("receiver said 410"));
        auto twice = m_store->redrive(dead->at(0).id, now);
        QVERIFY(!twice.ok());
        QCOMPARE(twice.error().code, core::ErrorCode::Conflict);
        auto unknown = m_store->redrive(987654321, now);
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.error().code, core::ErrorCode::NotFound);
    }

    void threeDispatchersAndOneKilled_data()
    {
        QTest::addColumn<bool>("overHttp");
        QTest::addColumn<int>("rows");
        QTest::newRow("in-process handler") << false << rowsFromEnv("PAYONCE_OUTBOX_ROWS", 10000);
        QTest::newRow("webhook receiver") << true << rowsFromEnv("PAYONCE_OUTBOX_WEBHOOK_ROWS", 10000);
    }
    void threeDispatchersAndOneKilled()
    {
        QFETCH(bool, overHttp);
        QFETCH(int, rows);
        QElapsedTimer timer;
        timer.start();
        QVERIFY(insertRows(rows));
        const qint64 insertMs = timer.elapsed();

        // The killed dispatcher: claims a batch and never reports.
        const qint64 killedAt = m_clock.nowMs();
        auto killed = m_store->claim(QStringLiteral("killed"), 200, killedAt, killedAt + kLeaseMs);
        QVERIFY(killed.ok());
        QCOMPARE(killed->size(), qMin(200, rows));

        DeliveryLog log;
        std::unique_ptr<WebhookReceiver> receiver;
        core::OutboxHandlerRegistry registry;
        if (overHttp) {
            receiver = std::make_unique<WebhookReceiver>(log);
            registry.add(kEventType,
                         std::make_shared<webhook::WebhookHandler>(webhook::WebhookOptions{{receiver->url()}, 200}));
        } else {
            registry.add(kEventType, std::make_shared<FlakyRecordingHandler>(log));
        }

        timer.restart();
        std::atomic<int> errors{0};
        std::atomic<int> staleReports{0};
        std::atomic<int> rounds{0};
        runConcurrently(3, [&](int i) {
            const QString dispatcherId = QStringLiteral("dispatcher-%1").arg(i);
            core::OutboxDispatcher dispatcher(*m_store, registry, m_clock, testOptions(dispatcherId));
            QElapsedTimer deadline;
            deadline.start();
            while (deadline.elapsed() < 150000) {
                auto r = dispatcher.runOnce();
                rounds.fetch_add(1);
                if (!r.ok()) {
                    errors.fetch_add(1);
                    qWarning() << dispatcherId << r.error().internalMessage;
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    continue;
                }
                staleReports.fetch_add(r->staleReports);
                if (r->claimed == 0) {
                    if (countRows(*m_db.database,
                                  QStringLiteral("SELECT COUNT(*) FROM outbox WHERE status = 'pending'"))
                        == 0)
                        return;
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            }
        });
        const qint64 dispatchMs = timer.elapsed();

        const auto records = log.records();
        int deliveredRows = 0, deadRows = 0, calls = 0;
        QString mismatch;
        auto rowsRead = m_db.database->read([&](sql::Session &session) -> core::Result<void> {
            auto q = session.exec(QStringLiteral("SELECT event_id, status, attempts, claimed_by FROM outbox"));
            if (!q)
                return q.error();
            QSqlQuery &query = q.value();
            while (query.next()) {
                const QString id = query.value(0).toString();
                const QString status = query.value(1).toString();
                const int attempts = query.value(2).toInt();
                const auto r = records.value(id);
                calls += r.calls;
                if (status == QStringLiteral("delivered")) {
                    ++deliveredRows;
                    if (r.successes != 1 || r.calls != attempts || attempts > kMaxAttempts)
                        mismatch = QStringLiteral("%1 delivered: attempts %2, calls %3, successes %4")
                                       .arg(id)
                                       .arg(attempts)
                                       .arg(r.calls)
                                       .arg(r.successes);
                } else if (status == QStringLiteral("dead")) {
                    ++deadRows;
                    if (attempts != kMaxAttempts || r.calls != kMaxAttempts || r.successes != 0)
                        mismatch = QStringLiteral("%1 dead: attempts %2, calls %3, successes %4")
                                       .arg(id)
                                       .arg(attempts)
                                       .arg(r.calls)
                                       .arg(r.successes);
                } else {
                    mismatch = QStringLiteral("%1 is still %2").arg(id, status);
                }
                if (!query.value(3).isNull())
                    mismatch = QStringLiteral("%1 is still claimed by %2").arg(id, query.value(3).toString());
            }
            return {};
        });
        QVERIFY(rowsRead.ok());

        qInfo("%s, %s: %d rows inserted in %lld ms; dispatched in %lld ms (%d rounds, %d deliveries): "
              "%d delivered, %d dead",
              qPrintable(dialectName(dialectUnderTest())), QTest::currentDataTag(), rows, insertMs, dispatchMs,
              rounds.load(), calls, deliveredRows, deadRows);

        QCOMPARE(log.overlaps(), 0);
        QCOMPARE(errors.load(), 0);
        QCOMPARE(staleReports.load(), 0);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        QCOMPARE(deliveredRows + deadRows, rows);
        QCOMPARE(records.size(), rows);

        // The killed dispatcher's rows: none touched before its lease ran out, all finished
        // by the others.
        for (const OutboxEvent &e : killed.value()) {
            const auto r = records.value(e.eventId);
            QVERIFY2(r.calls > 0, qPrintable(e.eventId));
            QVERIFY2(r.firstStartMs >= killedAt + kLeaseMs, qPrintable(e.eventId));
        }
    }

private:
    bool clearOutbox()
    {
        return m_db.database
            ->write([](sql::Session &session) -> core::Result<void> {
                auto r = session.exec(QStringLiteral("DELETE FROM outbox"));
                if (!r)
                    return r.error();
                return {};
            })
            .ok();
    }

    /// Multi-row INSERTs of 500 rows, all in one transaction.
    bool insertRows(int rows)
    {
        const qint64 now = m_clock.nowMs();
        auto done = m_db.database->write([&](sql::Session &session) -> core::Result<void> {
            for (int first = 0; first < rows; first += 500) {
                QStringList values;
                for (int n = first; n < qMin(rows, first + 500); ++n)
                    values.append(QStringLiteral("('evt-%1', '%2', 'agg-%1', '{\"n\":%1}', 'pending', 0, %3, %3)")
                                      .arg(n)
                                      .arg(kEventType)
                                      .arg(now));
                auto r = session.exec(QStringLiteral("INSERT INTO outbox (event_id, event_type, aggregate_id, payload, "
                                                     "status, attempts, next_attempt_at, created_at) VALUES ")
                                      + values.join(QLatin1Char(',')));
                if (!r)
                    return r.error();
            }
            return {};
        });
        if (!done.ok())
            qWarning() << done.error().internalMessage;
        return done.ok();
    }

    MigratedDatabase m_db;
    std::unique_ptr<sql::SqlOutboxStore> m_store;
    core::SystemClock m_clock;
};

QTEST_GUILESS_MAIN(TestOutbox)
#include "tst_outbox.moc"
