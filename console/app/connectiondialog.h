#pragma once

#include <QByteArray>
#include <QDialog>
#include <QUrl>

class QComboBox;
class QLineEdit;

namespace payonce::console {

/// Asks for the agent's URL and a token. The URLs used before are remembered (QSettings,
/// most recent first); the token never is — it lives in memory for the session only.
class ConnectionDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConnectionDialog(QWidget *parent = nullptr);

    QUrl agentUrl() const;
    QByteArray token() const;
    /// Puts the URL first in the remembered list (called once a connection is made).
    static void rememberUrl(const QUrl &url);
    static QStringList rememberedUrls();

private:
    QComboBox *m_url;
    QLineEdit *m_token;
};

} // namespace payonce::console
