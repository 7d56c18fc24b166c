#include "consoletestsupport.h"

#include "storagefixture.h"

#include "console/views/tablepanel.h"

#include <QAbstractItemModelTester>
#include <QDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>
#include <QWidget>

namespace payonce::testsupport {

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

bool raiseEffectMismatch(const AgentProcess &agent, sql::Database &database, const QString &orderNo, QString *error)
{
    const auto injected = execSql(database,
                                  QStringLiteral("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, "
                                                 "created_at) VALUES (?, 42, 'reward-replayed', 100, 1, 5)"),
                                  {orderNo});
    if (!injected.ok()) {
        *error = injected.error().internalMessage;
        return false;
    }
    const HttpAnswer run = agent.call("POST", QStringLiteral("/api/v1/reconciliation/run"),
                                      R"({"reason":"points complaint"})", kDesk);
    if (run.status != 200) {
        *error = QStringLiteral("reconciliation run: %1 %2").arg(run.status).arg(QString::fromUtf8(run.body));
        return false;
    }
    return true;
}

QString widgetPath(const QWidget *w)
{
    QStringList path;
    for (const QObject *o = w; o; o = o->parent()) {
        if (!o->objectName().isEmpty()) {
            path.prepend(o->objectName());
            if (path.size() == 3)
                break;
        }
    }
    return QStringLiteral("%1 (%2)").arg(path.join(u'/'), QString::fromLatin1(w->metaObject()->className()));
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
