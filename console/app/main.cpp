// payonce-console: the ops console. `payonce-console [--url URL]`; the token is asked for
// (or read from PAYONCE_CONSOLE_TOKEN, so a script never puts it on a command line).

#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("payonce"));
    QApplication::setApplicationName(QStringLiteral("payonce-console"));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("The payonce operations console"));
    parser.addHelpOption();
    const QCommandLineOption urlOption(QStringLiteral("url"), QStringLiteral("The agent's URL, e.g. http://127.0.0.1:8080"),
                                       QStringLiteral("URL"));
    parser.addOption(urlOption);
    parser.process(app);

    payonce::console::MainWindow window;
    window.show();
    const QByteArray token = qgetenv("PAYONCE_CONSOLE_TOKEN");
    if (parser.isSet(urlOption) && !token.isEmpty())
        window.connectTo(QUrl::fromUserInput(parser.value(urlOption)), token);
    else
        window.askConnection();
    return app.exec();
}
