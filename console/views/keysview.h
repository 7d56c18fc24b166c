#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;

namespace payonce::console {

class AgentClient;
class IdempotencyRecordModel;
class KeyStoreBanner;
class TablePanel;

/// The idempotency-key inspector: a user's key looked up (fingerprint, status, stored
/// response, locked_at) and a stuck in_flight record unlocked with a reason. The button
/// says why it cannot apply (a completed record) and, when the agent refuses (not past
/// its lock timeout), shows the agent's own sentence. Object names: "keyUserId",
/// "keyName", "keyLookup", "keyPanel", "unlockButton", "unlockExplanation", "keyResult".
class KeysView : public QWidget {
    Q_OBJECT
public:
    explicit KeysView(AgentClient *client, QWidget *parent = nullptr);

    IdempotencyRecordModel *record() const { return m_record; }
    /// Fills the form and looks the key up (the screenshot driver and tests use it too).
    void lookUp(const QString &userId, const QString &key);

public Q_SLOTS:
    void lookUpTyped();

private:
    void showUnlockState(const QString &refusal = {});
    void askUnlock();
    void unlock(const QString &userId, const QString &key, const QString &reason);

    AgentClient *m_client;
    IdempotencyRecordModel *m_record;
    QLineEdit *m_userId;
    QLineEdit *m_key;
    QPushButton *m_unlock;
    QLabel *m_explanation;
    QLabel *m_result;
    KeyStoreBanner *m_keyStore;
};

} // namespace payonce::console
