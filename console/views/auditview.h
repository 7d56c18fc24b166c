#pragma once

#include "shared/streammessage.h"

#include <QTimer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLabel;
class QLineEdit;

namespace payonce::console {

class AgentClient;
class AuditFilterProxy;
class AuditModel;
class TablePanel;

/// The audit trail: every action by anyone, newest first, filtered by actor, action,
/// target and time, exported to CSV like every table. The actor, the action and the start
/// of the range go to the API (GET /api/v1/audit?actor=&action=&since=, exact matches);
/// a part of the target and the end of the range filter what arrived (AuditFilterProxy);
/// the panel's text filter searches every column. Any stream event (someone acted)
/// fetches again, at most once a second. Object names: "auditActor", "auditAction",
/// "auditTarget", "auditSinceEnabled", "auditSince", "auditUntilEnabled", "auditUntil",
/// "auditApply", "auditStatus", panel "audit".
class AuditView : public QWidget {
    Q_OBJECT
public:
    explicit AuditView(AgentClient *client, QWidget *parent = nullptr);
    ~AuditView() override;

    AuditModel *audit() const { return m_audit; }
    AuditFilterProxy *filter() const { return m_filter; }
    TablePanel *panel() const { return m_panel; }
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    /// Fetches with the API's filters as the form holds them.
    void refresh();

private:
    QString query() const;
    void offerChoices();
    void applyLocalFilters();

    AgentClient *m_client;
    AuditModel *m_audit;
    AuditFilterProxy *m_filter;
    TablePanel *m_panel;
    QComboBox *m_actor;
    QComboBox *m_action;
    QLineEdit *m_target;
    QCheckBox *m_sinceEnabled;
    QDateTimeEdit *m_since;
    QCheckBox *m_untilEnabled;
    QDateTimeEdit *m_until;
    QLabel *m_status;
    QTimer m_eventRefresh;
};

} // namespace payonce::console
