#include "wallscreen.h"

#include "qcustomplot_include.h"
#include "ratechart.h"

#include "console/models/codelabels.h"
#include "console/models/layercolors.h"
#include "console/models/ratehistory.h"

#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QScreen>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

constexpr int kRedrawMs = 250;
// Read from across the room: captions and the chart's axes, smaller than the figures.
constexpr double kCaptionPointSize = 20.0;
constexpr double kAxisPointSize = 18.0;

QFont sizedFont(QFont font, double points, bool bold)
{
    font.setPointSizeF(points);
    font.setBold(bold);
    return font;
}

} // namespace

WallScreen::WallScreen(const RateHistory *history, QWidget *parent)
    : QWidget(parent, Qt::Window), m_history(history), m_chart(new RateChart(this))
{
    setObjectName(QStringLiteral("wallScreen"));
    setWindowTitle(tr("payonce — wall screen"));
    setAutoFillBackground(true);
    m_chart->setObjectName(QStringLiteral("wallChart"));
    QCustomPlot *plot = m_chart->plot();
    const QFont axisFont = sizedFont(font(), kAxisPointSize, false);
    for (QCPAxis *axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(axisFont);
        axis->setLabelFont(axisFont);
    }
    plot->legend->setFont(axisFont);

    // Figures above (the totals first, then the layers four to a row), the chart below
    // across the whole width: on a 1280×860 screen it keeps well over half the height.
    auto *figures = new QGridLayout;
    constexpr int kPerRow = 4;
    const QColor text = palette().color(QPalette::WindowText);
    int cell = 0;
    const auto place = [&](QLabel *figure) {
        figures->addWidget(figure->parentWidget(), cell / kPerRow, cell % kPerRow);
        ++cell;
    };
    place(addFigure(QStringLiteral("wallRequests"), tr("requests"), text, this));
    place(addFigure(QStringLiteral("wallP99"), tr("p99"), text, this));
    place(addFigure(QStringLiteral("wallCaught"), tr("duplicates caught"), text, this));
    cell = kPerRow;
    for (Layer layer : allLayers)
        place(addFigure(QStringLiteral("wallLayer_") + layerName(layer), layerLabel(layer), layerColor(layer), this));

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(figures);
    layout->addWidget(m_chart, 1);
    auto *hint = new QLabel(tr("F11 or Esc leaves"), this);
    hint->setAlignment(Qt::AlignRight);
    layout->addWidget(hint);

    m_redrawTimer.setInterval(kRedrawMs);
    connect(&m_redrawTimer, &QTimer::timeout, this, [this] { m_chart->showHistory(*m_history); });
}

WallScreen::~WallScreen() = default;

QLabel *WallScreen::addFigure(const QString &name, const QString &caption, const QColor &color, QWidget *parent)
{
    auto *box = new QWidget(parent);
    auto *captionLabel = new QLabel(caption, box);
    captionLabel->setFont(sizedFont(font(), kCaptionPointSize, false));
    auto *value = new QLabel(QStringLiteral("–"), box);
    value->setObjectName(name);
    value->setFont(sizedFont(font(), kFigurePointSize, true));
    QPalette colours = value->palette();
    colours.setColor(QPalette::WindowText, color);
    value->setPalette(colours);
    captionLabel->setPalette(colours);
    auto *boxLayout = new QVBoxLayout(box);
    boxLayout->setContentsMargins(8, 0, 8, 0);
    boxLayout->setSpacing(0);
    boxLayout->addWidget(captionLabel);
    boxLayout->addWidget(value);
    m_figures.insert(name, value);
    return value;
}

QList<QLabel *> WallScreen::figures() const
{
    return m_figures.values();
}

void WallScreen::applyMessage(const StreamMessage &message)
{
    if (const auto *snapshot = std::get_if<StreamSnapshot>(&message.body))
        applyMetrics(snapshot->metrics);
    else if (const auto *metrics = std::get_if<StreamMetrics>(&message.body))
        applyMetrics(*metrics);
}

void WallScreen::applyMetrics(const StreamMetrics &metrics)
{
    qint64 caught = 0;
    for (Layer layer : allLayers) {
        const qint64 total = metrics.duplicates.value(layer);
        if (layer != Layer::None)
            caught += total;
        m_figures.value(QStringLiteral("wallLayer_") + layerName(layer))->setText(QString::number(total));
    }
    m_figures.value(QStringLiteral("wallRequests"))->setText(QString::number(metrics.requests));
    m_figures.value(QStringLiteral("wallP99"))->setText(QStringLiteral("%1 ms").arg(metrics.latencyP99Ms, 0, 'f', 1));
    m_figures.value(QStringLiteral("wallCaught"))->setText(QString::number(caught));
}

void WallScreen::enter()
{
    m_chart->showHistory(*m_history);
    m_redrawTimer.start();
    showFullScreen();
    // Without a window manager (Xvfb, a kiosk X server) nobody applies the full-screen
    // state: then the window takes the screen's geometry itself.
    QTimer::singleShot(0, this, [this] {
        const QScreen *shown = screen();
        if (isVisible() && shown && geometry() != shown->geometry())
            setGeometry(shown->geometry());
    });
    raise();
    activateWindow();
}

void WallScreen::leave()
{
    m_redrawTimer.stop();
    hide();
    Q_EMIT left();
}

void WallScreen::toggle()
{
    if (isVisible())
        leave();
    else
        enter();
}

void WallScreen::keyPressEvent(QKeyEvent *event)
{
    // F11 usually reaches MainWindow's action first (this window is its child); Esc only here.
    if (event->key() == Qt::Key_Escape || event->key() == Qt::Key_F11) {
        leave();
        return;
    }
    QWidget::keyPressEvent(event);
}

} // namespace payonce::console
