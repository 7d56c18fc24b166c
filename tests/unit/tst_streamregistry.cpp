// The registry of live streams against the lifetimes of the sockets it watches: the
// stream hub owns the WebSockets and may destroy them after the HTTP server (and its
// registry) is gone, as an agent's shutdown does.
#include "http/streamregistry.h"

#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>

#include <memory>

using payonce::http::Principal;
using payonce::http::Role;
using payonce::http::StreamRegistry;

namespace {
Principal viewer()
{
    Principal p;
    p.name = QStringLiteral("wall");
    p.role = Role::Viewer;
    return p;
}

/// True when some connection on sender's signal was still there (and is now cut).
template <typename Sender, typename Signal>
bool stillConnected(Sender *sender, Signal signal)
{
    return QObject::disconnect(sender, signal, nullptr, nullptr);
}
} // namespace

class TestStreamRegistry : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void socketsThatOutliveTheRegistryCallNothingInIt();
    void aRevokedStreamIsClosedAndForgotten();
};

void TestStreamRegistry::socketsThatOutliveTheRegistryCallNothingInIt()
{
    QTcpSocket handshake;
    QWebSocket stream;
    {
        StreamRegistry registry(4);
        QCOMPARE(registry.admit(&handshake, viewer(), QByteArray("sha")), StreamRegistry::Admission::Admitted);
        registry.attach(&stream); // unconnected: both peers are the null address, port 0
        QCOMPARE(registry.countFor(viewer().name), 1);
    }
    // Had a connection outlived the registry, destroying the socket would call forget()
    // on freed memory (seen as an agent that crashed on SIGTERM after a token reload).
    QVERIFY(!stillConnected(&handshake, &QObject::destroyed));
    QVERIFY(!stillConnected(&handshake, &QAbstractSocket::disconnected));
    QVERIFY(!stillConnected(&stream, &QObject::destroyed));
    QVERIFY(!stillConnected(&stream, &QWebSocket::disconnected));
}

void TestStreamRegistry::aRevokedStreamIsClosedAndForgotten()
{
    StreamRegistry registry(4);
    QTcpSocket handshake;
    auto stream = std::make_unique<QWebSocket>();
    registry.admit(&handshake, viewer(), QByteArray("old"));
    registry.attach(stream.get());
    QCOMPARE(registry.closeRevoked([](const QByteArray &sha) { return sha == "new"; }), 1);
    // Revoked streams no longer count against the cap, and are not closed twice.
    QCOMPARE(registry.countFor(viewer().name), 0);
    QCOMPARE(registry.closeRevoked([](const QByteArray &) { return false; }), 0);
    stream.reset();
    QCOMPARE(registry.countFor(viewer().name), 0);
}

QTEST_MAIN(TestStreamRegistry)
#include "tst_streamregistry.moc"
