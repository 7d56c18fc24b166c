#pragma once

#include "shared/streammessage.h"

#include <QJsonObject>
#include <QList>
#include <QWidget>

#include <optional>
#include <utility>

class QComboBox;
class QLabel;
class QPushButton;

namespace payonce::console {

class AgentClient;
class LiveRefresh;
class OutboxModel;
class TablePanel;

/// The outbox: events pending or dead with their last error, and the ones re-driven (kept
/// in view once delivered, marked). Re-drive asks for a reason and applies to a dead event
/// only; the button says so otherwise. The list follows the stream (applyMessage), with no
/// polling.
/// Object names: "outboxStatus", "outboxPanel", "redriveButton", "redriveResult",
/// "refreshOutboxList".
class OutboxView : public QWidget {
    Q_OBJECT
public:
    explicit OutboxView(AgentClient *client, QWidget *parent = nullptr);

    OutboxModel *events() const { return m_events; }
    TablePanel *panel() const { return m_panel; }

    /// Refetches the list when the stream says it changed: an outbox.dead_letter event, or
    /// the pending or dead count of a metrics message moved (fetched while shown, else at
    /// the next show).
    void applyMessage(const payonce::StreamMessage &message);

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
    LiveRefresh *m_live;
    std::pair<std::optional<qint64>, std::optional<qint64>> m_counts; ///< pending, dead as last streamed
    int m_generation = 0;                                             ///< answers of an older refresh are dropped
};

} // namespace payonce::console
