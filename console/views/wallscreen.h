#pragma once

#include "shared/streammessage.h"

#include <QMap>
#include <QTimer>
#include <QWidget>

class QLabel;

namespace payonce::console {

class RateChart;
class RateHistory;

/// The war room's view of the dashboard, full screen: requests, p99 and what the defence
/// caught in figures of at least kFigurePointSize, each layer's total in its colour, and
/// the rate chart filling the rest of the screen. It plots the dashboard's own history
/// (one ring buffer, not two) and reads the same stream messages. F11 or Esc leaves
/// (MainWindow's F11 enters). Object names: "wallScreen", "wallRequests", "wallP99",
/// "wallCaught", "wallLayer_<layer>", "wallChart".
class WallScreen : public QWidget {
    Q_OBJECT
public:
    static constexpr double kFigurePointSize = 48.0;

    /// `history` must outlive the wall screen (the dashboard's).
    WallScreen(const RateHistory *history, QWidget *parent = nullptr);
    ~WallScreen() override;

    void applyMessage(const payonce::StreamMessage &message);
    RateChart *chart() const { return m_chart; }
    /// The figures, for a check of their size.
    QList<QLabel *> figures() const;

public Q_SLOTS:
    void enter();
    void leave();
    /// Enters when hidden, leaves when shown: F11's one key both ways.
    void toggle();

Q_SIGNALS:
    void left();

protected:
    void keyPressEvent(QKeyEvent *event) override;

private:
    QLabel *addFigure(const QString &name, const QString &caption, const QColor &color, QWidget *box);
    void applyMetrics(const StreamMetrics &metrics);

    const RateHistory *m_history;
    RateChart *m_chart;
    QMap<QString, QLabel *> m_figures;
    QTimer m_redrawTimer;
};

} // namespace payonce::console
