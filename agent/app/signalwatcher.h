#pragma once

#include <QObject>

#include <memory>

class QSocketNotifier;

namespace payonce::app {

/// Turns SIGTERM and SIGINT (stop) and SIGHUP (reload) into Qt signals on the thread that
/// created it, through a self-pipe (the only async-signal-safe way to reach an event
/// loop). One per process. A SIGHUP nobody listens to yet (during start-up) is ignored
/// instead of killing the process, as the default action would.
class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

Q_SIGNALS:
    /// SIGTERM or SIGINT arrived: stop accepting, finish in-flight work, exit.
    void terminationRequested(int signalNumber);
    /// SIGHUP arrived: re-read the configuration file and apply what can change live.
    void reloadRequested();

private:
    void readSignal();
    std::unique_ptr<QSocketNotifier> m_notifier;
};

} // namespace payonce::app
