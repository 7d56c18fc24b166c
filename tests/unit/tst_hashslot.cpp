// redis::hashSlot and tagForSlot: the cluster specification's rules, and a tag for every slot.
// tst_clusterslots checks the same function against a real cluster's CLUSTER KEYSLOT.

#include "redis/hashslot.h"

#include <QTest>

using namespace payonce::redis;

class TestHashSlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void knownSlots()
    {
        // Values redis.io gives for CLUSTER KEYSLOT.
        QCOMPARE(hashSlot("somekey"), 11058);
        QCOMPARE(hashSlot("foo{hash_tag}"), 2515);
    }

    // The specification's examples of what a hash tag is.
    void hashTags()
    {
        QCOMPARE(hashSlot("{user1000}.following"), hashSlot("user1000"));
        QCOMPARE(hashSlot("{user1000}.followers"), hashSlot("user1000"));
        QVERIFY(hashSlot("foo{}{bar}") != hashSlot("bar"));    // an empty first tag: the whole key
        QCOMPARE(hashSlot("foo{{bar}}zap"), hashSlot("{bar")); // the tag is "{bar"
        QCOMPARE(hashSlot("foo{bar}{zap}"), hashSlot("bar"));  // only the first tag counts
        QCOMPARE(hashSlot("lock:pay:{ORD-1}:4200000001"), hashSlot("ORD-1"));
    }

    void everySlotHasAShortTag()
    {
        for (int slot = 0; slot < kClusterSlots; ++slot) {
            const QByteArray tag = tagForSlot(slot);
            QVERIFY2(!tag.isEmpty() && tag.size() <= 4, qPrintable(QString::number(slot)));
            QCOMPARE(hashSlot(tag), slot);
            QCOMPARE(hashSlot(QByteArray("fence:state:{" + tag + "}")), slot);
        }
        QCOMPARE(tagForSlot(7), tagForSlot(7));
        QVERIFY(tagForSlot(-1).isEmpty());
        QVERIFY(tagForSlot(kClusterSlots).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestHashSlot)
#include "tst_hashslot.moc"
