#pragma once

#include <QObject>
#include <QString>

class QWidget;

namespace payonce::console {

class MainWindow;

/// `payonce-console --screenshot DIR`: lets the dashboard fill for a while, then shows each
/// main view in turn and saves the window as DIR/dashboard.png, callbacks.png (searched
/// for an order when one is given), breakers.png, compensations.png (every status),
/// qa.png (the scenario the stream showed, else the newest run, with its report),
/// audit.png, keys.png (a key looked up when one is given), locks.png, outbox.png,
/// incident.png and wall.png (the wall screen, full screen), then quits. For
/// scripts/console-screenshots.sh under Xvfb.
class ScreenshotDriver : public QObject {
    Q_OBJECT
public:
    /// `userKey`: "USER_ID:KEY" for the keys view, or empty.
    ScreenshotDriver(MainWindow *window, const QString &directory, const QString &orderNo, const QString &userKey,
                     int warmUpSeconds, QObject *parent = nullptr);
    void start();

Q_SIGNALS:
    /// 0 when every picture was written.
    void finished(int exitCode);

private:
    void shoot(int step);
    /// Saves a picture of `widget`, the main window when null.
    bool save(const QString &name, QWidget *widget = nullptr);

    MainWindow *m_window;
    QString m_directory;
    QString m_orderNo;
    QString m_userKey;
    int m_warmUpSeconds;
    bool m_failed = false;
};

} // namespace payonce::console
