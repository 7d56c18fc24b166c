#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QSpinBox;
class QPushButton;

namespace payonce::console {

/// Every action of the console asks for a reason (it lands in the agent's audit log);
/// some also for how long the action holds. OK stays disabled until a reason is typed.
/// Object names: "reasonDialog", "reasonEdit", "expiryMinutes", "reasonOk".
class ReasonDialog : public QDialog {
    Q_OBJECT
public:
    ReasonDialog(const QString &title, const QString &explanation, bool askExpiry, QWidget *parent);

    QString reason() const;
    /// Seconds; 0 when no expiry was asked.
    int expirySeconds() const;

private:
    QLineEdit *m_reason;
    QSpinBox *m_expiryMinutes = nullptr;
};

} // namespace payonce::console
