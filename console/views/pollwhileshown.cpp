#include "pollwhileshown.h"

#include <QEvent>
#include <QWidget>

namespace payonce::console {

PollWhileShown::PollWhileShown(QWidget *view, int intervalMs, std::function<void()> fetch)
    : QObject(view), m_fetch(std::move(fetch))
{
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, [this] { m_fetch(); });
    view->installEventFilter(this);
}

bool PollWhileShown::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Show) {
        m_fetch();
        m_timer.start();
    } else if (event->type() == QEvent::Hide) {
        m_timer.stop();
    }
    return QObject::eventFilter(watched, event);
}

} // namespace payonce::console
