#pragma once

#include <QObject>
#include <QTimer>

#include <functional>

class QWidget;

namespace payonce::console {

/// Refetches a view's list when the stream says that it changed (an event, a count in the
/// metrics that moved) — never on a clock of its own. changed() fetches at once while the
/// view is shown, and at its next show when hidden (a hidden view costs the agent nothing).
/// Changes that arrive together (a burst of events, a storm's moving counts) are fetched
/// once: a fetch starts at most every `gapMs`, the changes in between ride on the next.
/// Owned by (and watching) the view.
class LiveRefresh : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultGapMs = 250;

    LiveRefresh(QWidget *view, std::function<void()> fetch, int gapMs = kDefaultGapMs);

    /// The stream says the list changed.
    void changed();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void fetchIfShown();

    QWidget *m_view;
    std::function<void()> m_fetch;
    QTimer m_gap;          ///< running: a fetch started less than gapMs ago
    bool m_pending = true; ///< a change waits for the gap to end or the view to show (at first: the list itself)
};

} // namespace payonce::console
