#include "liverefresh.h"

#include <QEvent>
#include <QWidget>

namespace payonce::console {

LiveRefresh::LiveRefresh(QWidget *view, std::function<void()> fetch, int gapMs)
    : QObject(view), m_view(view), m_fetch(std::move(fetch))
{
    m_gap.setSingleShot(true);
    m_gap.setInterval(gapMs);
    connect(&m_gap, &QTimer::timeout, this, [this] {
        if (m_pending)
            fetchIfShown();
    });
    view->installEventFilter(this);
}

void LiveRefresh::changed()
{
    m_pending = true;
    if (!m_gap.isActive())
        fetchIfShown();
}

void LiveRefresh::fetchIfShown()
{
    if (!m_view->isVisible())
        return; // m_pending stays: the next show fetches
    m_pending = false;
    m_gap.start();
    m_fetch();
}

bool LiveRefresh::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Show && m_pending && !m_gap.isActive())
        fetchIfShown();
    return QObject::eventFilter(watched, event);
}

} // namespace payonce::console
