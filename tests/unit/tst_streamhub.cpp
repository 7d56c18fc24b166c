// StreamHub's backpressure on loopback sockets (no servers): a client that never reads is
// coalesced below the hard bound and dropped above it, counted in the registry, while a
// reading client on the same hub gets every message in sequence.

#include "stream/streamhub.h"

#include "core/metrics/metricsregistry.h"

#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>
#include <QWebSocketServer>

#include <thread>

using namespace payonce;
using payonce::stream::StreamHub;

namespace {

/// Big messages (about 8 KiB each), so a backlog builds within a few hundred ticks.
StreamMetrics bigMetrics()
{
    StreamMetrics m;
    for (Layer layer : allLayers)
        m.duplicates.insert(layer, 1);
    for (int i = 0; i < 200; ++i)
        m.breakerStates.insert(QStringLiteral("webhook.event.number.%1").arg(i), QStringLiteral("closed"));
    return m;
}

double sample(const core::MetricsRegistry &registry, const QString &name)
{
    const auto samples = registry.samples(name);
    return samples.isEmpty() ? -1 : samples.first().value;
}

/// A hub behind a WebSocket server on a free loopback port.
struct Fixture {
    core::MetricsRegistry registry;
    QWebSocketServer server{QStringLiteral("tst_streamhub"), QWebSocketServer::NonSecureMode};
    std::unique_ptr<StreamHub> hub;

    explicit Fixture(StreamHub::Options options)
    {
        hub = std::make_unique<StreamHub>(
            options, [] { return bigMetrics(); }, [] { return StreamSnapshot{}; }, &registry);
        QObject::connect(&server, &QWebSocketServer::newConnection, &server, [this] {
            while (server.hasPendingConnections())
                hub->addClient(std::unique_ptr<QWebSocket>(server.nextPendingConnection()));
        });
        server.listen(QHostAddress::LocalHost, 0);
        hub->start();
    }
    /// A client that completes the handshake by hand and then never reads.
    std::unique_ptr<QTcpSocket> connectSilent() const
    {
        auto socket = std::make_unique<QTcpSocket>();
        socket->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 4096);
        socket->setReadBufferSize(4096);
        socket->connectToHost(QHostAddress::LocalHost, server.serverPort());
        if (!socket->waitForConnected(10000))
            return nullptr;
        socket->write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
        socket->flush();
        return socket;
    }
};

} // namespace

class TestStreamHub : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void silentClientIsCoalescedOthersKeepTheirSequence()
    {
        StreamHub::Options options;
        options.interval = std::chrono::milliseconds(1);
        options.coalesceAboveBytes = 64 * 1024;
        options.dropAboveBytes = 64 * 1024 * 1024;
        Fixture f(options);
        QVERIFY(f.server.isListening());
        auto silent = f.connectSilent();
        QVERIFY(silent);
        QWebSocket reader;
        QList<qint64> seqs;
        connect(&reader, &QWebSocket::textMessageReceived, this, [&](const QString &text) {
            const auto m = decodeStreamMessage(text.toUtf8());
            seqs << (m ? m->seq : -1);
        });
        reader.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(f.server.serverPort())));
        QTRY_VERIFY_WITH_TIMEOUT(sample(f.registry, QStringLiteral("payonce_stream_coalesced_total")) > 0, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(seqs.size() >= 200, 60000);
        for (qsizetype i = 0; i < seqs.size(); ++i)
            QCOMPARE(seqs.at(i), qint64(i + 1));
        QCOMPARE(f.hub->clientCount(), 2);
        QCOMPARE(f.hub->droppedTotal(), quint64(0));
        QCOMPARE(double(f.hub->coalescedTotal()), sample(f.registry, QStringLiteral("payonce_stream_coalesced_total")));
    }

    void backlogPastTheHardBoundDropsTheClient()
    {
        StreamHub::Options options;
        options.interval = std::chrono::milliseconds(1);
        options.coalesceAboveBytes = 64 * 1024 * 1024; // never coalesce: the backlog grows
        options.dropAboveBytes = 256 * 1024;
        Fixture f(options);
        auto silent = f.connectSilent();
        QVERIFY(silent);
        QTRY_COMPARE_WITH_TIMEOUT(f.hub->clientCount(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(sample(f.registry, QStringLiteral("payonce_stream_dropped_total")), 1.0, 60000);
        QTRY_COMPARE_WITH_TIMEOUT(f.hub->clientCount(), 0, 10000);
        QCOMPARE(f.hub->droppedTotal(), quint64(1));
    }

    void eventsFromAnotherThreadArriveInOrder()
    {
        StreamHub::Options options;
        options.interval = std::chrono::hours(1); // no ticks: only the snapshot and the events
        Fixture f(options);
        QWebSocket reader;
        QList<StreamMessage> messages;
        connect(&reader, &QWebSocket::textMessageReceived, this, [&](const QString &text) {
            if (const auto m = decodeStreamMessage(text.toUtf8()))
                messages << *m;
        });
        reader.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(f.server.serverPort())));
        QTRY_COMPARE_WITH_TIMEOUT(messages.size(), qsizetype(1), 10000);
        QVERIFY(std::holds_alternative<StreamSnapshot>(messages.first().body));
        std::thread worker([&] {
            for (int i = 0; i < 20; ++i)
                f.hub->publish({QStringLiteral("breaker.mode"), QString::number(i), QStringLiteral("auto"),
                                QStringLiteral("desk"), QStringLiteral("why")});
        });
        worker.join();
        QTRY_COMPARE_WITH_TIMEOUT(messages.size(), qsizetype(21), 10000);
        for (qsizetype i = 1; i < messages.size(); ++i) {
            QCOMPARE(messages.at(i).seq, qint64(i + 1));
            QCOMPARE(std::get<StreamEvent>(messages.at(i).body).subject, QString::number(i - 1));
        }
    }
};

QTEST_GUILESS_MAIN(TestStreamHub)
#include "tst_streamhub.moc"
