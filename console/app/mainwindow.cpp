#include "mainwindow.h"

#include "connectiondialog.h"
#include "language.h"

#include "console/models/codelabels.h"
#include "console/net/agentclient.h"
#include "console/views/auditview.h"
#include "console/views/breakersview.h"
#include "console/views/callbacksview.h"
#include "console/views/compensationsview.h"
#include "console/views/dashboardview.h"
#include "console/views/incidentview.h"
#include "console/views/keysview.h"
#include "console/views/locksview.h"
#include "console/views/orderrefundsview.h"
#include "console/views/outboxview.h"
#include "console/views/qaview.h"
#include "console/views/wallscreen.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

constexpr int kPassingNoticeMs = 15000;

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_client(new AgentClient(this)), m_stream(new StreamClient(this)),
      m_views(new QTabWidget(this)), m_banner(new QLabel(this)), m_state(new QLabel(this)),
      m_findingNotice(new QLabel(this))
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("payonce console"));
    m_dashboard = new DashboardView(m_client, m_views);
    m_callbacks = new CallbacksView(m_client, m_views);
    m_breakers = new BreakersView(m_client, m_views);
    m_compensations = new CompensationsView(m_client, m_views);
    m_qa = new QaView(m_client, m_views);
    m_audit = new AuditView(m_client, m_views);
    m_wall = new WallScreen(&m_dashboard->history(), this);
    m_views->setObjectName(QStringLiteral("views"));
    m_views->addTab(m_dashboard, tr("&Dashboard"));
    m_views->addTab(m_callbacks, tr("&Callbacks"));
    m_views->addTab(m_breakers, tr("&Breakers"));
    m_views->addTab(m_compensations, tr("Co&mpensations"));
    m_views->addTab(m_qa, tr("&QA"));
    m_views->addTab(m_audit, tr("&Audit"));
    m_keys = new KeysView(m_client, m_views);
    m_views->addTab(m_keys, tr("&Keys"));
    m_locks = new LocksView(m_client, m_views);
    m_views->addTab(m_locks, tr("&Locks"));
    m_outbox = new OutboxView(m_client, m_views);
    m_views->addTab(m_outbox, tr("&Outbox"));
    m_incident = new IncidentView(m_client, m_views);
    m_views->addTab(m_incident, tr("&Incident"));
    m_refunds = new OrderRefundsView(m_client, m_views);
    m_views->addTab(m_refunds, tr("Re&funds"));

    m_banner->setObjectName(QStringLiteral("connectionBanner"));
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(QStringLiteral("background: #d62728; color: white; padding: 6px; font-weight: bold"));
    m_banner->hide();
    m_state->setObjectName(QStringLiteral("connectionState"));
    m_state->setText(tr("Not connected"));
    m_findingNotice->setObjectName(QStringLiteral("findingNotice"));
    m_findingNotice->setStyleSheet(QStringLiteral("color: #d62728; font-weight: bold"));
    m_findingNotice->hide();
    statusBar()->addPermanentWidget(m_findingNotice);
    statusBar()->addPermanentWidget(m_state);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_banner);
    layout->addWidget(m_views, 1);
    setCentralWidget(central);
    buildMenus();

    connect(m_client, &AgentClient::connectionProblem, this, &MainWindow::showProblem);
    connect(m_client, &AgentClient::agentAnswered, this, [this] {
        // The agent answered and took the token: a banner about reaching it or about the
        // token is out of date. A "role too low" banner stays until the next action.
        if (m_banner->property("problemKind").toInt() != int(ApiError::Kind::Forbidden))
            m_banner->hide();
    });
    connect(m_stream, &StreamClient::stateChanged, this, &MainWindow::showStreamState);
    connect(m_stream, &StreamClient::messageReceived, m_dashboard, &DashboardView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_breakers, &BreakersView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_qa, &QaView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_audit, &AuditView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_wall, &WallScreen::applyMessage);
    connect(m_wall, &WallScreen::left, this, [this] { activateWindow(); });
    connect(m_stream, &StreamClient::messageReceived, m_locks, &LocksView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_incident, &IncidentView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_compensations, &CompensationsView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, m_outbox, &OutboxView::applyMessage);
    connect(m_stream, &StreamClient::messageReceived, this, &MainWindow::noticeFinding);
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        if (m_views->currentWidget() == m_compensations)
            m_findingNotice->hide();
    });
    resize(1200, 800);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *connectAction = file->addAction(tr("&Connect…"), this, &MainWindow::askConnection);
    connectAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    QAction *saveChart = file->addAction(tr("&Save chart as PNG…"), this, &MainWindow::saveChartWithDialog);
    saveChart->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_S));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < m_views->count(); ++i) {
        QAction *show = view->addAction(m_views->tabText(i).remove(u'&'), this,
                                        [this, i] { m_views->setCurrentIndex(i); });
        // Ctrl+1 … Ctrl+9, then Ctrl+0 for the tenth view, as the digits lie on the keyboard.
        if (i < 9)
            show->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        else if (i == 9)
            show->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
        show->setObjectName(QStringLiteral("showView%1").arg(i + 1));
    }
    QAction *wall = view->addAction(tr("&Wall screen"), m_wall, &WallScreen::toggle);
    wall->setShortcut(QKeySequence(Qt::Key_F11));
    wall->setObjectName(QStringLiteral("showWallScreen"));
    QAction *refresh = view->addAction(tr("&Refresh"), this, [this] {
        m_breakers->refresh();
        m_compensations->refresh();
        m_dashboard->refreshOutbox();
        m_qa->refresh();
        m_audit->refresh();
        m_locks->refresh();
        m_outbox->refresh();
        m_incident->refresh();
    });
    refresh->setShortcut(QKeySequence::Refresh);

    // The language is read once at start (every view builds its texts then): a choice
    // here is remembered and applies from the next start.
    view->addSeparator();
    QMenu *languages = view->addMenu(tr("&Language"));
    languages->setObjectName(QStringLiteral("languageMenu"));
    auto *choices = new QActionGroup(languages);
    const QString chosen = language::chosen();
    for (const language::Choice &choice : language::choices()) {
        QAction *action = languages->addAction(choice.nativeName);
        action->setObjectName(
            QStringLiteral("language_%1").arg(choice.code.isEmpty() ? QStringLiteral("system") : choice.code));
        action->setCheckable(true);
        action->setChecked(choice.code == chosen);
        choices->addAction(action);
        connect(action, &QAction::triggered, this, [this, choice] {
            language::choose(choice.code);
            statusBar()->showMessage(tr("Language: %1, from the next start of the console").arg(choice.nativeName));
        });
    }
}

void MainWindow::connectTo(const QUrl &agentUrl, const QByteArray &token)
{
    m_banner->hide();
    if (agentUrl != m_client->agentUrl())
        m_dashboard->clearHistory();
    m_client->setEndpoint(agentUrl, token);
    m_stream->open(agentUrl, token);
    m_state->setText(tr("Connecting to %1…").arg(agentUrl.toString()));
    // The first answers tell at once whether the token is accepted (the stream's refused
    // upgrade carries no reason the socket reports).
    m_breakers->refresh();
    m_compensations->refresh();
    m_dashboard->refreshOutbox();
    m_qa->refresh();
    m_audit->refresh();
    m_incident->refresh();
    m_outbox->refresh();
}

void MainWindow::askConnection()
{
    auto *dialog = new ConnectionDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        ConnectionDialog::rememberUrl(dialog->agentUrl());
        connectTo(dialog->agentUrl(), dialog->token());
    });
    dialog->open();
}

void MainWindow::saveChartWithDialog()
{
    const QString fileName = QFileDialog::getSaveFileName(
        this, tr("Save chart"), QStringLiteral("payonce-interception.png"), tr("PNG images (*.png)"));
    if (!fileName.isEmpty() && !m_dashboard->saveChartPng(fileName))
        QMessageBox::warning(this, tr("Save failed"), tr("Could not write %1.").arg(fileName));
}

void MainWindow::noticeFinding(const StreamMessage &message)
{
    const auto *event = std::get_if<StreamEvent>(&message.body);
    if (!event || event->kind != streamevent::FindingRaised)
        return;
    const QString orderNo = event->detail.value(QStringLiteral("order_no")).toString();
    const QString text = tr("New finding: %1 for %2 — see Compensations")
                             .arg(findingKindLabel(event->value), orderNo.isEmpty() ? event->subject : orderNo);
    if (!isMoneyFinding(event->value) || m_views->currentWidget() == m_compensations) {
        statusBar()->showMessage(text, kPassingNoticeMs);
        return;
    }
    m_findingNotice->setText(tr("Money at risk: %1").arg(text));
    m_findingNotice->show();
    QApplication::alert(this);
}

void MainWindow::showProblem(const ApiError &error)
{
    // Throttling follows from a refused token: the banner keeps saying why (the 401).
    if (error.kind == ApiError::Kind::Throttled && !m_banner->isHidden()
        && m_banner->property("problemKind").toInt() == int(ApiError::Kind::Unauthenticated))
        return;
    m_banner->setText(error.describe());
    m_banner->setProperty("problemKind", int(error.kind));
    m_banner->show();
}

void MainWindow::showStreamState(StreamClient::State state)
{
    const QString agent = m_client->agentUrl().toString();
    switch (state) {
    case StreamClient::State::Closed: m_state->setText(tr("Not connected")); break;
    case StreamClient::State::Connecting: m_state->setText(tr("Connecting to %1…").arg(agent)); break;
    case StreamClient::State::Live: m_state->setText(tr("Live: %1").arg(agent)); break;
    case StreamClient::State::WaitingToReconnect:
        m_state->setText(tr("Stream lost: reconnecting to %1 in %2 s")
                             .arg(agent)
                             .arg(double(m_stream->reconnectDelayMs()) / 1000.0, 0, 'f', 1));
        break;
    }
    m_state->setProperty("streamState", int(state));
}

} // namespace payonce::console
