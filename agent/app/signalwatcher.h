#pragma once

#include <QObject>

#include <memory>

class QSocketNotifier;

namespace payonce::app {

/// Turns SIGTERM and SIGINT into a Qt signal on the thread that created it, through a
/// self-pipe (the only async-signal-safe way to reach an event loop). One per process.
class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

Q_SIGNALS:
    /// SIGTERM or SIGINT arrived: stop accepting, finish in-flight work, exit.
    void terminationRequested(int signalNumber);

private:
    void readSignal();
    std::unique_ptr<QSocketNotifier> m_notifier;
};

} // namespace payonce::app
