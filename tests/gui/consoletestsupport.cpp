#include "consoletestsupport.h"

#include "console/views/tablepanel.h"

#include <QAbstractItemModelTester>
#include <QDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>

namespace payonce::testsupport {

Headers bearer(const QByteArray &token)
{
    return {{"Authorization", "Bearer " + token}};
}

bool selectSourceRow(console::TablePanel *panel, int sourceRow)
{
    return panel->selectSourceRow(sourceRow) && panel->currentSourceRow() == sourceRow;
}

QDialog *shownReasonDialog(QWidget *window)
{
    for (QDialog *dialog : window->findChildren<QDialog *>(QStringLiteral("reasonDialog"))) {
        if (dialog->isVisible())
            return dialog;
    }
    return nullptr;
}

bool reasonDialogShown(QWidget *window)
{
    return shownReasonDialog(window) != nullptr;
}

bool answerReasonDialog(QWidget *window, const QString &reason, int expiryMinutes)
{
    QDialog *dialog = shownReasonDialog(window);
    if (!dialog)
        return false;
    QTest::keyClicks(child<QLineEdit>(dialog, "reasonEdit"), reason);
    if (expiryMinutes > 0)
        child<QSpinBox>(dialog, "expiryMinutes")->setValue(expiryMinutes);
    auto *ok = child<QPushButton>(dialog, "reasonOk");
    if (!ok->isEnabled())
        return false;
    QTest::mouseClick(ok, Qt::LeftButton);
    return true;
}

std::unique_ptr<console::MainWindow> openTestedConsole(int agentPort, const QByteArray &token)
{
    auto window = std::make_unique<console::MainWindow>();
    for (QAbstractItemModel *model : window->findChildren<QAbstractItemModel *>())
        new QAbstractItemModelTester(model, QAbstractItemModelTester::FailureReportingMode::QtTest, model);
    window->show();
    window->connectTo(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(agentPort)), token);
    return window;
}

} // namespace payonce::testsupport
