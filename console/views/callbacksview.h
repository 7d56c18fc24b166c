#pragma once

#include <QJsonObject>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace payonce::console {

class AgentClient;
class CallbackDeliveriesModel;
class TablePanel;

/// The callback inspector: the deliveries of one pay_no or order_no, each with the layer
/// that decided it, and the replay of a stored delivery — a reason, then the dry run (the
/// layer that would decide, the rows that would change), then, confirmed, the replay and
/// what it did. Object names: "callbackQuery", "callbackQueryKind", "callbackSearch",
/// "callbackLog", "replayButton", "replayConfirmDialog", "replayResult".
class CallbacksView : public QWidget {
    Q_OBJECT
public:
    explicit CallbacksView(AgentClient *client, QWidget *parent = nullptr);

    CallbackDeliveriesModel *deliveries() const { return m_deliveries; }

public Q_SLOTS:
    void search();
    void replaySelected();

private:
    void runReplay(const QString &channel, const QString &payNo, const QString &reason, bool dryRun);
    void confirmReplay(const QString &channel, const QString &payNo, const QString &reason, const QJsonObject &dryRun);

    AgentClient *m_client;
    CallbackDeliveriesModel *m_deliveries;
    TablePanel *m_panel;
    QLineEdit *m_query;
    QComboBox *m_queryKind;
    QLabel *m_log;
    QLabel *m_result;
    QPushButton *m_replay;
};

} // namespace payonce::console
