#include "keystorecontract.h"
#include "storagefixture.h"

#include "redis/embeddedkeystore.h"
#include "redis/keystorefactory.h"

#include <QTest>

using namespace std::chrono_literals;
using namespace payonce;

/// The key-store contract on the embedded store (single-instance mode), plus what only the
/// embedded store has: an epoch per start, and the refusal to serve several instances.
class TestKeyStoreEmbedded : public tests::KeyStoreContract {
    Q_OBJECT
protected:
    core::KeyStore &store() override { return *m_store; }
    core::KeyStore &secondStore() override { return *m_store; }

private Q_SLOTS:
    void init()
    {
        auto created = redis::EmbeddedKeyStore::create(m_epochs);
        QVERIFY2(created.ok(), created.ok() ? "" : qPrintable(created.error().internalMessage));
        m_store = std::move(created).value();
        QCOMPARE(m_store->backendName(), QStringLiteral("embedded"));
    }
    void cleanup() { m_store.reset(); }

    void restartBumpsTheEpoch()
    {
        // An agent restart loses the in-process counters; the new start id's epoch keeps
        // the tokens growing.
        const QString order = QStringLiteral("ORD-restart");
        quint64 last = 0;
        for (int i = 0; i < 5; ++i) {
            auto token = m_store->fencing().next(order);
            QVERIFY(token.ok());
            last = token.value();
        }
        const QString firstId = m_store->instanceId();
        QVERIFY(firstId.startsWith(QLatin1String("embedded-")));
        m_store.reset();
        auto restarted = redis::EmbeddedKeyStore::create(m_epochs);
        QVERIFY(restarted.ok());
        m_store = std::move(restarted).value();
        QVERIFY(m_store->instanceId() != firstId);
        auto token = m_store->fencing().next(order);
        QVERIFY(token.ok());
        QCOMPARE(token.value() & 0xFFFFFFFFULL, quint64(1)); // the counter started again...
        QVERIFY(token.value() > last);                       // ...the token did not go back
    }

    void factoryChoosesEmbeddedByDefault()
    {
        const auto parsed = config::RedisUrl::parse(QStringLiteral("embedded"));
        QVERIFY(parsed.ok());
        for (const config::RedisUrl &setting : {config::RedisUrl{}, parsed.value()}) {
            redis::KeyStoreSettings settings;
            settings.redis = setting;
            auto opened = redis::openKeyStore(settings, m_epochs);
            QVERIFY(opened.ok());
            QCOMPARE(opened.value()->backendName(), QStringLiteral("embedded"));
        }
    }

    void factoryRefusesEmbeddedForSeveralInstances()
    {
        redis::KeyStoreSettings settings;
        settings.redis = config::RedisUrl::parse(QStringLiteral("embedded")).value();
        settings.severalInstances = true;
        auto opened = redis::openKeyStore(settings, m_epochs);
        QVERIFY(!opened.ok());
        QCOMPARE(opened.error().code, core::ErrorCode::Misconfigured);
        QVERIFY(opened.error().internalMessage.contains(QLatin1String("single instance")));

        settings.redis = config::RedisUrl{}; // no Redis configured at all, but several instances
        auto unset = redis::openKeyStore(settings, m_epochs);
        QVERIFY(!unset.ok());
        QCOMPARE(unset.error().code, core::ErrorCode::Misconfigured);
    }

private:
    testsupport::SqliteFenceEpochs m_epochs; // fence_epochs in a real (SQLite) database
    std::unique_ptr<redis::EmbeddedKeyStore> m_store;
};

QTEST_GUILESS_MAIN(TestKeyStoreEmbedded)
#include "tst_keystore_embedded.moc"
