// Helper for tst_serverharness's reaper test: starts all three servers and a Redis Sentinel
// topology, prints "<kind> <port> <folder>" for each server (for the topology: each of its
// five processes, one folder) and then "ready", and waits to be SIGKILLed, so the servers
// outlive it and only the reapers can clean up.

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
    const auto sentinel = mariadb ? RedisSentinelTopology::start(&error) : nullptr;
    if (!sentinel) {
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
    out << "ready" << Qt::endl;
    for (;;)
        QThread::sleep(60);
}
