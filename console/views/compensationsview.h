#pragma once

#include "shared/streammessage.h"

#include <QWidget>

class QComboBox;
class QLabel;

namespace payonce::console {

class AgentClient;
class CompensationsModel;
class FindingsModel;
class LiveRefresh;
class TablePanel;

/// Findings and compensations: the open findings with their evidence; the compensations
/// (the proposal queue by default, any status on choice) with Approve / Reject, each with
/// a reason. The four-eyes refusal is explained in words where it blocks. Object names:
/// "findingsTable", "compensationsTable", "compensationStatus", "approveButton",
/// "rejectButton", "refreshCompensations", "decisionMessage".
class CompensationsView : public QWidget {
    Q_OBJECT
public:
    explicit CompensationsView(AgentClient *client, QWidget *parent = nullptr);

    FindingsModel *findings() const { return m_findings; }
    CompensationsModel *compensations() const { return m_compensations; }

    /// Refetches findings and compensations on finding.raised, compensation.proposed and
    /// compensation.decided (while shown, else at the next show).
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    void refresh();

private:
    void askDecision(bool approve);
    void decide(qint64 id, bool approve, const QString &reason);

    AgentClient *m_client;
    FindingsModel *m_findings;
    CompensationsModel *m_compensations;
    TablePanel *m_findingsPanel;
    TablePanel *m_compensationsPanel;
    QComboBox *m_status;
    QLabel *m_message;
    LiveRefresh *m_live;
};

} // namespace payonce::console
