#pragma once

#include "shared/streammessage.h"

#include <QWidget>

class QLabel;

namespace payonce::console {

class AgentClient;
class BreakersModel;
class TablePanel;

/// The gateways' circuit breakers: state, mode, failure rate, calls, and who forced a
/// mode, why and until when. Force open / Force closed / Auto ask for a reason (and an
/// expiry when forcing). Another operator's change arrives as a stream event and the
/// table is fetched again at once. Object names: "forceOpenButton", "forceClosedButton",
/// "autoButton", "breakerResult", "breakersTable".
class BreakersView : public QWidget {
    Q_OBJECT
public:
    explicit BreakersView(AgentClient *client, QWidget *parent = nullptr);

    BreakersModel *breakers() const { return m_breakers; }
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    void refresh();

private:
    void askMode(const QString &mode);
    void setMode(const QString &name, const QString &mode, const QString &reason, int expirySeconds);

    AgentClient *m_client;
    BreakersModel *m_breakers;
    TablePanel *m_panel;
    QLabel *m_result;
};

} // namespace payonce::console
