#include "connectiondialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>

namespace payonce::console {

namespace {

const auto kUrlsKey = QStringLiteral("connection/agentUrls");
constexpr int kRememberedUrls = 10;

} // namespace

ConnectionDialog::ConnectionDialog(QWidget *parent)
    : QDialog(parent), m_url(new QComboBox(this)), m_token(new QLineEdit(this))
{
    setObjectName(QStringLiteral("connectionDialog"));
    setWindowTitle(tr("Connect to a payonce agent"));
    m_url->setObjectName(QStringLiteral("agentUrl"));
    m_url->setEditable(true);
    m_url->addItems(rememberedUrls());
    if (m_url->count() == 0)
        m_url->addItem(QStringLiteral("http://127.0.0.1:8080"));
    m_token->setObjectName(QStringLiteral("agentToken"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("bearer token (not stored)"));
    auto *form = new QFormLayout(this);
    form->addRow(tr("Agent URL"), m_url);
    form->addRow(tr("Token"), m_token);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

QUrl ConnectionDialog::agentUrl() const
{
    return QUrl::fromUserInput(m_url->currentText().trimmed());
}

QByteArray ConnectionDialog::token() const
{
    return m_token->text().trimmed().toUtf8();
}

void ConnectionDialog::rememberUrl(const QUrl &url)
{
    QStringList urls = rememberedUrls();
    const QString text = url.toString();
    urls.removeAll(text);
    urls.prepend(text);
    QSettings().setValue(kUrlsKey, urls.mid(0, kRememberedUrls));
}

QStringList ConnectionDialog::rememberedUrls()
{
    return QSettings().value(kUrlsKey).toStringList();
}

} // namespace payonce::console
