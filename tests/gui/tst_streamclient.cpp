// StreamClient against a QWebSocketServer in the test (loopback): the token in the
// handshake, frames decoded with shared/'s codec (a frame it refuses is reported, not
// delivered), and the automatic reconnect: after the server drops the connection the
// client comes back by itself; while nothing listens its delay doubles (0.5 s, 1 s, 2 s …)
// and returns to the shortest once a connection is open again.

#include "console/net/streamclient.h"

#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>
#include <QWebSocketServer>

using namespace payonce;
using namespace payonce::console;

namespace {

QByteArray snapshotFrame(qint64 seq)
{
    StreamMessage message;
    message.seq = seq;
    message.at = QDateTime::currentDateTimeUtc();
    StreamSnapshot snapshot;
    for (Layer layer : allLayers) {
        snapshot.metrics.duplicates.insert(layer, 0);
        snapshot.metrics.rates.insert(layer, 0.0);
    }
    message.body = snapshot;
    return encodeStreamMessage(message);
}

} // namespace

class TestStreamClient : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void decodesAndReconnects()
    {
        QWebSocketServer server(QStringLiteral("test"), QWebSocketServer::NonSecureMode);
        QVERIFY(server.listen(QHostAddress::LocalHost));
        const quint16 port = server.serverPort();
        QList<QWebSocket *> accepted;
        QByteArrayList authorizations;
        connect(&server, &QWebSocketServer::newConnection, this, [&] {
            QWebSocket *socket = server.nextPendingConnection();
            authorizations << socket->request().rawHeader("Authorization");
            accepted << socket;
            socket->sendTextMessage(QString::fromUtf8(snapshotFrame(1)));
            socket->sendTextMessage(QStringLiteral("{\"type\":\"nonsense\"}"));
        });

        StreamClient client;
        QList<StreamMessage> messages;
        QStringList refused;
        connect(&client, &StreamClient::messageReceived, this, [&](const StreamMessage &m) { messages << m; });
        connect(&client, &StreamClient::messageRefused, this, [&](const QString &why) { refused << why; });
        const QUrl agent(QStringLiteral("http://127.0.0.1:%1").arg(port));
        QCOMPARE(StreamClient::streamUrl(agent).toString(),
                 QStringLiteral("ws://127.0.0.1:%1/api/v1/stream").arg(port));
        client.open(agent, "view-token");

        QTRY_COMPARE(client.state(), StreamClient::State::Live);
        QTRY_COMPARE(messages.size(), 1);
        QVERIFY(std::holds_alternative<StreamSnapshot>(messages.first().body));
        QTRY_COMPARE(refused.size(), 1);
        QCOMPARE(authorizations.value(0), QByteArray("Bearer view-token"));

        // The server drops the connection: the client reconnects by itself.
        accepted.first()->close();
        QTRY_COMPARE_WITH_TIMEOUT(accepted.size(), 2, 10000);
        QTRY_COMPARE(client.state(), StreamClient::State::Live);
        QTRY_COMPARE(messages.size(), 2);

        // Nothing listens any more: the client waits longer after each failed attempt.
        server.close();
        accepted.last()->close();
        QTRY_COMPARE(client.state(), StreamClient::State::WaitingToReconnect);
        QList<int> delays{client.reconnectDelayMs()};
        for (int attempt = 0; attempt < 2; ++attempt) {
            QTRY_VERIFY_WITH_TIMEOUT(client.reconnectDelayMs() > delays.last(), 10000);
            delays << client.reconnectDelayMs();
        }
        QVERIFY2(delays.at(1) == 2 * delays.at(0) && delays.at(2) == 2 * delays.at(1),
                 qPrintable(QStringLiteral("%1 %2 %3").arg(delays.at(0)).arg(delays.at(1)).arg(delays.at(2))));

        // Listening again on the same port: back, and the delay is the shortest again.
        QVERIFY(server.listen(QHostAddress::LocalHost, port));
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), StreamClient::State::Live, 15000);
        QCOMPARE(client.reconnectDelayMs(), 500);
        QCOMPARE(authorizations.size(), 3);

        client.close();
        QCOMPARE(client.state(), StreamClient::State::Closed);
    }
};

QTEST_MAIN(TestStreamClient)
#include "tst_streamclient.moc"
