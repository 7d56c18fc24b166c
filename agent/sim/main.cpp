// payonce-sim: the simulated WeChat Pay v3 and Alipay platforms (simserver.h).
// Exit codes: 0 after SIGTERM/SIGINT, 1 bad configuration, 2 cannot listen, 3 key trouble.

#include "simoptions.h"
#include "simserver.h"

#include <QCoreApplication>
#include <QSaveFile>
#include <QSocketNotifier>

#include <csignal>
#include <cstdio>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

int g_signalFd[2] = {-1, -1};

void onSignal(int)
{
    const char byte = 1;
    [[maybe_unused]] const auto written = ::write(g_signalFd[0], &byte, 1);
}

void printLine(FILE *stream, const QString &text)
{
    std::fprintf(stream, "%s\n", text.toLocal8Bit().constData());
    std::fflush(stream);
}

} // namespace

int main(int argc, char *argv[])
{
    const pid_t parentAtStart = ::getppid();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("payonce-sim"));

    auto options = payonce::sim::parseSimOptions(QCoreApplication::arguments());
    if (!options) {
        printLine(stderr, QStringLiteral("payonce-sim: ") + options.error().internalMessage);
        return 1;
    }
    if (options->showHelp) {
        printLine(stdout, options->helpText);
        return 0;
    }

    // SIGTERM/SIGINT through a socket pair into the event loop (a handler may only write).
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, g_signalFd) != 0) {
        printLine(stderr, QStringLiteral("payonce-sim: socketpair failed"));
        return 1;
    }
    QSocketNotifier notifier(g_signalFd[1], QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, &app, [] { QCoreApplication::quit(); });
    struct sigaction action = {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);

    if (options->exitWithParent) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parentAtStart) // the parent died before prctl took effect
            return 0;
    }

    auto platformKey = payonce::crypto::generateRsaKey(2048);
    if (!platformKey) {
        printLine(stderr, QStringLiteral("payonce-sim: ") + platformKey.error().internalMessage);
        return 3;
    }
    payonce::sim::SimServer server(*options, *platformKey);
    const quint16 port = server.listen();
    if (port == 0) {
        printLine(
            stderr,
            QStringLiteral("payonce-sim: cannot listen on %1:%2").arg(options->address.toString()).arg(options->port));
        return 2;
    }
    if (!options->platformKeyOut.isEmpty()) {
        QSaveFile file(options->platformKeyOut); // atomic: a reader never sees half a key
        if (!file.open(QIODevice::WriteOnly) || file.write(server.platformPublicKeyPem()) < 0 || !file.commit()) {
            printLine(
                stderr,
                QStringLiteral("payonce-sim: cannot write %1: %2").arg(options->platformKeyOut, file.errorString()));
            return 3;
        }
    }
    printLine(stdout,
              QStringLiteral(
                  "payonce-sim listening on %1:%2, platform key serial %3, notifications: APIv3 key %4, time scale %5")
                  .arg(options->address.toString())
                  .arg(port)
                  .arg(options->platformSerial)
                  .arg(options->apiv3Key.isEmpty() ? QStringLiteral("missing (no WeChat notifications)")
                                                   : QStringLiteral("set"))
                  .arg(options->timeScale));

    const int rc = QCoreApplication::exec();
    server.shutdown();
    printLine(stdout, QStringLiteral("payonce-sim stopped"));
    return rc;
}
