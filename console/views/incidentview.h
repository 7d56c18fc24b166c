#pragma once

#include "console/models/drainprogress.h"

#include "shared/streammessage.h"

#include <QTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace payonce::console {

class AgentClient;

/// The incident switch: accept-only mode on and off with a reason (callbacks are then only
/// recorded as `accepted` rows and answered, not processed), the accepted rows waiting,
/// and the drain's progress once it is off. GET /api/v1/mode is polled while accept-only
/// is on or rows are draining; a callback.mode event (another operator) fetches at once.
/// Object names: "callbackModeValue", "acceptedWaitingValue", "modeChangedBy",
/// "drainProgress", "acceptOnlyOnButton", "acceptOnlyOffButton", "modeResult".
class IncidentView : public QWidget {
    Q_OBJECT
public:
    explicit IncidentView(AgentClient *client, QWidget *parent = nullptr);

    const DrainProgress &progress() const { return m_progress; }
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    void refresh();

private:
    void showMode(const QJsonObject &mode);
    void askMode(const QString &mode);
    void setMode(const QString &mode, const QString &reason);

    AgentClient *m_client;
    DrainProgress m_progress;
    QLabel *m_mode;
    QLabel *m_waiting;
    QLabel *m_changedBy;
    QProgressBar *m_drain;
    QPushButton *m_on;
    QPushButton *m_off;
    QLabel *m_result;
    QTimer m_poll;
    bool m_fetching = false;
};

} // namespace payonce::console
