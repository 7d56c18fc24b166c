#pragma once

#include "console/net/streamclient.h"

#include <QMainWindow>

class QLabel;
class QTabWidget;

namespace payonce::console {

class AgentClient;
class AuditView;
struct ApiError;
class BreakersView;
class CallbacksView;
class CompensationsView;
class DashboardView;
class QaView;
class WallScreen;
class IncidentView;
class KeysView;
class LocksView;
class OrderRefundsView;
class OutboxView;

/// The console's window: a banner for connection problems (unreachable, token refused,
/// role too low — naming the role needed), the views as tabs (Ctrl+1…9, Ctrl+0), the wall screen (F11), and the
/// connection state in the status bar at all times. Object names: "connectionBanner",
/// "connectionState", "views".
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Connects REST and stream to the agent with the token (kept in memory only).
    void connectTo(const QUrl &agentUrl, const QByteArray &token);

    AgentClient *client() const { return m_client; }
    StreamClient *stream() const { return m_stream; }
    DashboardView *dashboard() const { return m_dashboard; }
    CallbacksView *callbacks() const { return m_callbacks; }
    BreakersView *breakers() const { return m_breakers; }
    CompensationsView *compensations() const { return m_compensations; }
    QaView *qa() const { return m_qa; }
    AuditView *audit() const { return m_audit; }
    WallScreen *wall() const { return m_wall; }
    KeysView *keys() const { return m_keys; }
    LocksView *locks() const { return m_locks; }
    OutboxView *outbox() const { return m_outbox; }
    IncidentView *incident() const { return m_incident; }
    OrderRefundsView *refunds() const { return m_refunds; }
    QTabWidget *views() const { return m_views; }

public Q_SLOTS:
    void askConnection();
    void saveChartWithDialog();

private:
    void showProblem(const payonce::console::ApiError &error);
    void showStreamState(payonce::console::StreamClient::State state);
    void buildMenus();
    /// A finding the stream announced: a red notice in the status bar for money (until the
    /// compensations view is opened), a passing message for the others.
    void noticeFinding(const payonce::StreamMessage &message);

    AgentClient *m_client;
    StreamClient *m_stream;
    QTabWidget *m_views;
    DashboardView *m_dashboard;
    CallbacksView *m_callbacks;
    BreakersView *m_breakers;
    CompensationsView *m_compensations;
    QaView *m_qa;
    AuditView *m_audit;
    WallScreen *m_wall;
    KeysView *m_keys;
    LocksView *m_locks;
    OutboxView *m_outbox;
    IncidentView *m_incident;
    OrderRefundsView *m_refunds;
    QLabel *m_banner;
    QLabel *m_state;
    QLabel *m_findingNotice;
};

} // namespace payonce::console
