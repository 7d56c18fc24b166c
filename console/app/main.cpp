// payonce-console: the ops console. `payonce-console [--url URL]`; the token is asked for
// (or read from PAYONCE_CONSOLE_TOKEN, so a script never puts it on a command line).
// `--screenshot DIR` saves a picture of each main view and quits (scripts/console-screenshots.sh).

#include "language.h"
#include "mainwindow.h"
#include "screenshotdriver.h"

#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("payonce"));
    QApplication::setApplicationName(QStringLiteral("payonce-console"));
    // The language before any text is made: the help below is translated too.
    QString chosenLanguage = payonce::console::language::chosen();
    for (int i = 1; i < argc; ++i) {
        const QByteArray argument(argv[i]);
        if (argument == "--language" && i + 1 < argc)
            chosenLanguage = QString::fromLocal8Bit(argv[i + 1]);
        else if (argument.startsWith("--language="))
            chosenLanguage = QString::fromLocal8Bit(argument.mid(int(qstrlen("--language="))));
    }
    payonce::console::language::install(app, chosenLanguage);
    QCommandLineParser parser;
    parser.setApplicationDescription(QCoreApplication::translate("main", "The payonce operations console"));
    parser.addHelpOption();
    const QCommandLineOption urlOption(
        QStringLiteral("url"), QCoreApplication::translate("main", "The agent's URL, e.g. http://127.0.0.1:8080"),
        QStringLiteral("URL"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"),
        QCoreApplication::translate("main", "Save a PNG of each main view into DIR, then quit "
                                            "(needs --url and PAYONCE_CONSOLE_TOKEN)"),
        QStringLiteral("DIR"));
    const QCommandLineOption orderOption(
        QStringLiteral("screenshot-order"),
        QCoreApplication::translate("main", "With --screenshot: the order the callbacks view shows"),
        QStringLiteral("ORDER_NO"));
    const QCommandLineOption keyOption(
        QStringLiteral("screenshot-key"),
        QCoreApplication::translate("main", "With --screenshot: the idempotency key the keys view shows"),
        QStringLiteral("USER_ID:KEY"));
    const QCommandLineOption warmUpOption(
        QStringLiteral("screenshot-after"),
        QCoreApplication::translate("main", "With --screenshot: seconds of live data first (default 20)"),
        QStringLiteral("SECONDS"), QStringLiteral("20"));
    const QCommandLineOption languageOption(
        QStringLiteral("language"),
        QCoreApplication::translate("main", "The language: en or zh_CN (default: View → Language, else the system's)"),
        QStringLiteral("CODE"));
    parser.addOptions({urlOption, screenshotOption, orderOption, keyOption, warmUpOption, languageOption});
    parser.process(app);

    payonce::console::MainWindow window;
    window.show();
    const QByteArray token = qgetenv("PAYONCE_CONSOLE_TOKEN");
    const bool canConnect = parser.isSet(urlOption) && !token.isEmpty();
    if (canConnect)
        window.connectTo(QUrl::fromUserInput(parser.value(urlOption)), token);
    if (parser.isSet(screenshotOption)) {
        if (!canConnect) {
            std::fprintf(stderr, "payonce-console: --screenshot needs --url and PAYONCE_CONSOLE_TOKEN\n");
            return 2;
        }
        auto *driver = new payonce::console::ScreenshotDriver(&window, parser.value(screenshotOption),
                                                              parser.value(orderOption), parser.value(keyOption),
                                                              qBound(0, parser.value(warmUpOption).toInt(), 600), &app);
        QObject::connect(driver, &payonce::console::ScreenshotDriver::finished, &app, &QCoreApplication::exit);
        driver->start();
    } else if (!canConnect) {
        window.askConnection();
    }
    return app.exec();
}
