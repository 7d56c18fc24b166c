#include "rediskeystorecontract.h"

#include "verifyprinting.h"

#include "redis/rediskeystore.h"

#include <QElapsedTimer>
#include <QTest>

namespace payonce::tests {

RedisKeyStoreContract::RedisKeyStoreContract() = default;

RedisKeyStoreContract::~RedisKeyStoreContract() = default;

core::KeyStore &RedisKeyStoreContract::store()
{
    return *m_store;
}

core::KeyStore &RedisKeyStoreContract::secondStore()
{
    return *m_second;
}

void RedisKeyStoreContract::initTestCase()
{
    QString error;
    QElapsedTimer started;
    started.start();
    QVERIFY2(startRedis(&error), qPrintable(error));
    qInfo("%s up in %lld ms", redisDescription(), started.elapsed());
}

void RedisKeyStoreContract::init()
{
    m_store = std::make_unique<redis::RedisKeyStore>(options(), m_epochs);
    m_second = std::make_unique<redis::RedisKeyStore>(options(), m_epochs);
    PAYONCE_VERIFY_PRINTING(waitUntilReachable(*m_store, 15000), redisLogs());
}

void RedisKeyStoreContract::cleanup()
{
    m_second.reset();
    m_store.reset();
}

} // namespace payonce::tests
