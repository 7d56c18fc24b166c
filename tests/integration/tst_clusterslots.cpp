// redis::hashSlot against a real Redis Cluster (three masters from the harness): CLUSTER
// KEYSLOT of 4 048 keys — random ones full of braces, the specification's examples, and
// keys tagged with tagForSlot() for every 8th slot — must be what payonce computes.

#include "redis/hashslot.h"
#include "support/serverharness.h"

#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTest>

using namespace payonce;
using testsupport::RedisClusterTopology;

namespace {

QByteArray respCommand(const QList<QByteArray> &parts)
{
    QByteArray out = "*" + QByteArray::number(parts.size()) + "\r\n";
    for (const QByteArray &part : parts)
        out += "$" + QByteArray::number(part.size()) + "\r\n" + part + "\r\n";
    return out;
}

} // namespace

class TestClusterSlots : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void hashSlotIsTheClustersKeySlot()
    {
        QString error;
        RedisClusterTopology::Options options;
        options.replicasPerMaster = 0;
        auto cluster = RedisClusterTopology::start(options, &error);
        QVERIFY2(cluster, qPrintable(error));

        QList<QByteArray> keys{"foo",
                               "somekey",
                               "foo{hash_tag}",
                               "{user1000}.following",
                               "foo{}{bar}",
                               "foo{{bar}}zap",
                               "foo{bar}{zap}",
                               "{}",
                               "{",
                               "}",
                               "a{b",
                               "lock:pay:{ORD-1}:4200000001"};
        QRandomGenerator random(20261206);
        static constexpr char kBytes[] = "ab{}:-_0123456789XYZ";
        while (keys.size() < 2000) {
            QByteArray key(int(random.bounded(1, 24)), '\0');
            for (char &c : key)
                c = kBytes[random.bounded(int(sizeof(kBytes) - 1))];
            keys.append(key);
        }
        for (int slot = 0; slot < redis::kClusterSlots; slot += 8)
            keys.append("fence:state:{" + redis::tagForSlot(slot) + "}");

        QTcpSocket socket;
        socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(cluster->masterPorts().first()));
        QVERIFY(socket.waitForConnected(5000));
        for (const QByteArray &key : keys) // pipelined: one round trip for all
            socket.write(respCommand({"CLUSTER", "KEYSLOT", key}));
        QByteArray replies;
        while (replies.count('\n') < keys.size() && socket.waitForReadyRead(5000))
            replies += socket.readAll();
        const QList<QByteArray> lines = replies.trimmed().split('\n');
        QCOMPARE(lines.size(), keys.size());
        int checked = 0;
        for (int i = 0; i < keys.size(); ++i) {
            const QByteArray line = lines.at(i).trimmed();
            QVERIFY2(line.startsWith(':'), line.constData());
            QCOMPARE(redis::hashSlot(keys.at(i)), line.mid(1).toInt());
            ++checked;
        }
        qInfo("%d keys: payonce's hash slot is the cluster's for each", checked);
    }
};

QTEST_GUILESS_MAIN(TestClusterSlots)
#include "tst_clusterslots.moc"
