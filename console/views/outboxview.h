#pragma once

#include <QJsonObject>
#include <QList>
#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;

namespace payonce::console {

class AgentClient;
class OutboxModel;
class TablePanel;

/// The outbox: events pending or dead with their last error, and the ones re-driven (kept
/// in view once delivered, marked). Re-drive asks for a reason and applies to a dead event
/// only; the button says so otherwise. While shown, the list is fetched every two seconds.
/// Object names: "outboxStatus", "outboxPanel", "redriveButton", "redriveResult",
/// "refreshOutboxList".
class OutboxView : public QWidget {
    Q_OBJECT
public:
    explicit OutboxView(AgentClient *client, QWidget *parent = nullptr);

    OutboxModel *events() const { return m_events; }
    TablePanel *panel() const { return m_panel; }

public Q_SLOTS:
    void refresh();

private:
    void showRedriveState();
    void askRedrive();
    void redrive(qint64 id, const QString &reason);

    AgentClient *m_client;
    OutboxModel *m_events;
    TablePanel *m_panel;
    QComboBox *m_status;
    QPushButton *m_redrive;
    QLabel *m_result;
    int m_generation = 0; ///< answers of an older refresh are dropped
};

} // namespace payonce::console
