#include "reasondialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace payonce::console {

ReasonDialog::ReasonDialog(const QString &title, const QString &explanation, bool askExpiry, QWidget *parent)
    : QDialog(parent), m_reason(new QLineEdit(this))
{
    setObjectName(QStringLiteral("reasonDialog"));
    setWindowTitle(title);
    setAttribute(Qt::WA_DeleteOnClose);
    auto *text = new QLabel(explanation, this);
    text->setWordWrap(true);
    m_reason->setObjectName(QStringLiteral("reasonEdit"));
    m_reason->setPlaceholderText(tr("Why (ticket, incident, …) — recorded in the audit log"));
    auto *form = new QFormLayout;
    form->addRow(tr("Reason"), m_reason);
    if (askExpiry) {
        m_expiryMinutes = new QSpinBox(this);
        m_expiryMinutes->setObjectName(QStringLiteral("expiryMinutes"));
        m_expiryMinutes->setRange(1, 7 * 24 * 60);
        m_expiryMinutes->setValue(30);
        m_expiryMinutes->setSuffix(tr(" min"));
        form->addRow(tr("Expires after"), m_expiryMinutes);
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);
    ok->setObjectName(QStringLiteral("reasonOk"));
    ok->setEnabled(false);
    connect(m_reason, &QLineEdit::textChanged, ok,
            [ok](const QString &typed) { ok->setEnabled(!typed.trimmed().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(text);
    layout->addLayout(form);
    layout->addWidget(buttons);
}

QString ReasonDialog::reason() const
{
    return m_reason->text().trimmed();
}

int ReasonDialog::expirySeconds() const
{
    return m_expiryMinutes ? m_expiryMinutes->value() * 60 : 0;
}

} // namespace payonce::console
