// Helper for tst_serverharness's reaper test: starts all three servers, a Redis Sentinel
// topology and a Redis Cluster, prints "<kind> <port> <folder>" for each server (for a
// topology: each of its processes, one folder) and then "ready", and waits to be SIGKILLed,
// so the servers outlive it and only the reapers can clean up. The Sentinel topology has
// passwords on its nodes and Sentinels (the reaper goes by pid files and folders, never
// asks them anything).

#include "serverharness.h"

#include <QCoreApplication>
#include <QTextStream>
#include <QThread>

using namespace payonce::testsupport;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QTextStream out(stdout);
    QString error;
    const auto redis = RedisServer::start({QStringLiteral("secret")}, &error);
    const auto postgres = redis ? PostgresServer::start(&error) : nullptr;
    const auto mariadb = postgres ? MariaDbServer::start(&error) : nullptr;
    RedisSentinelTopology::Options sentinelOptions;
    sentinelOptions.password = QStringLiteral("node-secret");
    sentinelOptions.sentinelPassword = QStringLiteral("sentinel-secret");
    const auto sentinel = mariadb ? RedisSentinelTopology::start(sentinelOptions, &error) : nullptr;
    const auto cluster = sentinel ? RedisClusterTopology::start(&error) : nullptr;
    if (!cluster) {
        out << "error " << error << Qt::endl;
        return 1;
    }
    out << "redis " << redis->port() << ' ' << redis->folder() << '\n'
        << "postgres " << postgres->port() << ' ' << postgres->folder() << '\n'
        << "mariadb " << mariadb->port() << ' ' << mariadb->folder() << '\n';
    for (const int port : sentinel->dataPorts())
        out << "redis-sentinel-node " << port << ' ' << sentinel->folder() << '\n';
    for (const QString &address : sentinel->sentinels())
        out << "redis-sentinel " << address.section(u':', 1) << ' ' << sentinel->folder() << '\n';
    for (const QString &address : cluster->nodes())
        out << "redis-cluster-node " << address.section(u':', 1) << ' ' << cluster->folder() << '\n';
    out << "ready" << Qt::endl;
    for (;;)
        QThread::sleep(60);
}
