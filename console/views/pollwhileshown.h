#pragma once

#include <QObject>
#include <QTimer>

#include <functional>

class QWidget;

namespace payonce::console {

/// Fetches a view's list when the view is shown and then every `intervalMs` while it
/// stays shown — for lists the stream does not carry. A hidden view costs the agent
/// nothing. Owned by (and watching) the view.
class PollWhileShown : public QObject {
    Q_OBJECT
public:
    PollWhileShown(QWidget *view, int intervalMs, std::function<void()> fetch);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QTimer m_timer;
    std::function<void()> m_fetch;
};

} // namespace payonce::console
