#include "screenshotdriver.h"

#include "mainwindow.h"

#include "console/models/qarunsmodel.h"
#include "console/views/auditview.h"
#include "console/views/breakersview.h"
#include "console/views/callbacksview.h"
#include "console/views/compensationsview.h"
#include "console/views/dashboardview.h"
#include "console/views/incidentview.h"
#include "console/views/keysview.h"
#include "console/views/locksview.h"
#include "console/views/outboxview.h"
#include "console/views/qaview.h"
#include "console/views/wallscreen.h"

#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QPixmap>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>

namespace payonce::console {

namespace {

// Time for a view's fetches to come back before its picture is taken.
constexpr int kSettleMs = 2500;

} // namespace

ScreenshotDriver::ScreenshotDriver(MainWindow *window, const QString &directory, const QString &orderNo,
                                   const QString &userKey, int warmUpSeconds, QObject *parent)
    : QObject(parent), m_window(window), m_directory(directory), m_orderNo(orderNo), m_userKey(userKey),
      m_warmUpSeconds(warmUpSeconds)
{
}

void ScreenshotDriver::start()
{
    QDir().mkpath(m_directory);
    QTimer::singleShot(m_warmUpSeconds * 1000, this, [this] { shoot(0); });
}

void ScreenshotDriver::shoot(int step)
{
    QTabWidget *views = m_window->views();
    switch (step) {
    case 0: views->setCurrentWidget(m_window->dashboard()); break;
    case 1:
        save(QStringLiteral("dashboard.png"));
        views->setCurrentWidget(m_window->callbacks());
        if (!m_orderNo.isEmpty()) {
            m_window->findChild<QComboBox *>(QStringLiteral("callbackQueryKind"))
                ->setCurrentText(QStringLiteral("order_no"));
            m_window->findChild<QLineEdit *>(QStringLiteral("callbackQuery"))->setText(m_orderNo);
            m_window->callbacks()->search();
        }
        break;
    case 2:
        save(QStringLiteral("callbacks.png"));
        views->setCurrentWidget(m_window->breakers());
        m_window->breakers()->refresh();
        break;
    case 3: {
        save(QStringLiteral("breakers.png"));
        views->setCurrentWidget(m_window->compensations());
        auto *status = m_window->findChild<QComboBox *>(QStringLiteral("compensationStatus"));
        status->setCurrentIndex(status->findData(QString()));
        m_window->compensations()->refresh();
        break;
    }
    case 4: {
        save(QStringLiteral("compensations.png"));
        views->setCurrentWidget(m_window->qa());
        // The scenario the stream showed it, else the newest run.
        QaView *qa = m_window->qa();
        const QString newest = qa->runs()->rowObject(0).value(QStringLiteral("scenario_id")).toString();
        const QString scenario = qa->shownScenario().isEmpty() ? newest : qa->shownScenario();
        qa->refresh();
        if (!scenario.isEmpty())
            qa->showScenario(scenario);
        break;
    }
    case 5:
        save(QStringLiteral("qa.png"));
        views->setCurrentWidget(m_window->audit());
        m_window->audit()->refresh();
        break;
    case 6: {
        save(QStringLiteral("audit.png"));
        views->setCurrentWidget(m_window->keys());
        const qsizetype colon = m_userKey.indexOf(u':');
        if (colon > 0)
            m_window->keys()->lookUp(m_userKey.left(colon), m_userKey.mid(colon + 1));
        break;
    }
    case 7:
        save(QStringLiteral("keys.png"));
        views->setCurrentWidget(m_window->locks()); // fetched when shown
        break;
    case 8:
        save(QStringLiteral("locks.png"));
        views->setCurrentWidget(m_window->outbox()); // fetched when shown
        break;
    case 9:
        save(QStringLiteral("outbox.png"));
        views->setCurrentWidget(m_window->incident());
        m_window->incident()->refresh();
        break;
    case 10:
        save(QStringLiteral("incident.png"));
        views->setCurrentWidget(m_window->dashboard());
        m_window->wall()->enter();
        break;
    default:
        save(QStringLiteral("wall.png"), m_window->wall());
        m_window->wall()->leave();
        Q_EMIT finished(m_failed ? 1 : 0);
        return;
    }
    QTimer::singleShot(step == 0 ? 500 : kSettleMs, this, [this, step] { shoot(step + 1); });
}

bool ScreenshotDriver::save(const QString &name, QWidget *widget)
{
    const QString path = QDir(m_directory).filePath(name);
    const bool saved = (widget ? widget : m_window)->grab().save(path);
    std::fprintf(stderr, "payonce-console: %s %s\n", saved ? "saved" : "could not write", qPrintable(path));
    m_failed = m_failed || !saved;
    return saved;
}

} // namespace payonce::console
