#pragma once

#include "keystorecontract.h"
#include "storagefixture.h"

#include "redis/redisoptions.h"

#include <QString>

#include <memory>

namespace payonce::redis {
class RedisKeyStore;
}

namespace payonce::tests {

/// The key-store contract on redis::RedisKeyStore, as tst_keystore_redis,
/// tst_keystore_sentinel and tst_keystore_cluster run it: the subclass starts its Redis
/// (one server, a Sentinel topology, a cluster) once in startRedis(); before every test
/// function two fresh stores on it — two agents — connect with options() and the first
/// must answer within 15 s (or the test fails with redisLogs()); after it both are closed.
/// Their fencing epochs come from fence_epochs in a real (SQLite) database, m_epochs.
class RedisKeyStoreContract : public KeyStoreContract {
    Q_OBJECT
public:
    RedisKeyStoreContract();
    ~RedisKeyStoreContract() override;

protected:
    core::KeyStore &store() override;
    core::KeyStore &secondStore() override;

    /// Starts the Redis under test; false with *error set when it did not start.
    virtual bool startRedis(QString *error) = 0;
    /// What startRedis() started, for the start-up time logged ("3 masters and 3 replicas").
    virtual const char *redisDescription() const = 0;
    /// The options the two stores connect with.
    virtual redis::RedisOptions options() const = 0;
    /// The last lines of the Redis logs, for a failure message.
    virtual QString redisLogs() const = 0;

    testsupport::SqliteFenceEpochs m_epochs;
    std::unique_ptr<redis::RedisKeyStore> m_store;
    std::unique_ptr<redis::RedisKeyStore> m_second;

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
};

} // namespace payonce::tests
