#pragma once

// What the console's GUI tests share: finding widgets by object name and answering the
// reason dialog as an operator would.

#include "agentfixture.h"
#include "console/app/mainwindow.h"

#include <QApplication>
#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>
#include <QSettings>
#include <QString>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

class QDialog;
class QWidget;

namespace payonce::console {
class TablePanel;
}
namespace payonce::sql {
class Database;
}

namespace payonce::testsupport {

template <typename T>
T *child(QObject *parent, const char *name)
{
    return parent->findChild<T *>(QLatin1String(name));
}

/// Where a widget is, for a failure message: up to three object names from it upwards and
/// its class, "mainWindow/wallScreen/wallP99 (QLabel)".
QString widgetPath(const QWidget *w);

/// Selects the row of a TablePanel whose source row is `sourceRow`, as a click would.
bool selectSourceRow(console::TablePanel *panel, int sourceRow);

/// The reason dialog on screen (one answered before may still await its deferred delete).
QDialog *shownReasonDialog(QWidget *window);
bool reasonDialogShown(QWidget *window);

/// The open reason dialog of a window: types the reason (and the expiry) and presses OK.
bool answerReasonDialog(QWidget *window, const QString &reason, int expiryMinutes = 0);

/// Extra points for the paid order `orderNo` (user 42) written behind the side-effect keys'
/// back (raw SQL), then a reconciliation run (as desk) that finds them: an effect_mismatch
/// finding and the patrol's compensation proposal. False and *error when a step failed.
bool raiseEffectMismatch(const AgentProcess &agent, sql::Database &database, const QString &orderNo, QString *error);

/// A console window shown and connected to the agent on loopback `agentPort` with
/// `token`, every model and proxy of it checked by QAbstractItemModelTester on every
/// change it makes.
std::unique_ptr<console::MainWindow> openTestedConsole(int agentPort, const QByteArray &token);

/// main() of a console GUI test: the application, and the console's QSettings in a folder
/// of this run (never a user's settings).
template <typename Test>
int runConsoleTest(int argc, char *argv[], const QString &applicationName)
{
    QApplication app(argc, argv);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    QApplication::setOrganizationName(QStringLiteral("payonce-tests"));
    QApplication::setApplicationName(applicationName);
    Test test;
    return QTest::qExec(&test, argc, argv);
}

} // namespace payonce::testsupport
