// Helper for tst_serverharness's reaper test: starts all three servers, prints
// "<kind> <port> <folder>" for each and then "ready", and waits to be SIGKILLed, so the
// servers outlive it and only the reapers can clean up.

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
    if (!mariadb) {
        out << "error " << error << Qt::endl;
        return 1;
    }
    out << "redis " << redis->port() << ' ' << redis->folder() << '\n'
        << "postgres " << postgres->port() << ' ' << postgres->folder() << '\n'
        << "mariadb " << mariadb->port() << ' ' << mariadb->folder() << '\n'
        << "ready" << Qt::endl;
    for (;;)
        QThread::sleep(60);
}
