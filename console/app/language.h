#pragma once

#include <QList>
#include <QLocale>
#include <QString>

class QCoreApplication;

namespace payonce::console {

/// The console's language: the system locale's unless the operator chose one in
/// View → Language (kept in QSettings under "view/language"; empty: the system's). The
/// English strings are the sources; Simplified Chinese comes from
/// translations/payonce_console_zh_CN.ts, built into the binary (":/i18n/…qm"), and
/// Qt's own dialog buttons from the system's qtbase translations. Numbers, money and
/// times follow the same locale (QLocale's default, see localeformat.h).
namespace language {

struct Choice {
    QString code;       ///< "" (the system's), "en" or "zh_CN"
    QString nativeName; ///< as a reader of that language names it
};

/// Every choice the menu offers, the system's first.
QList<Choice> choices();

/// The chosen language code ("" when none was chosen).
QString chosen();
void choose(const QString &code);

/// The translation that a choice (or, for "", the system locale `system`) resolves to:
/// "zh_CN" for Chinese in Simplified script, "en" otherwise.
QString resolve(const QString &code, const QLocale &system = QLocale::system());

/// Installs the translators for `code` (resolved) into the application and makes the
/// matching locale QLocale's default. Returns the resolved code; false in *loaded when a
/// translation that should exist could not be loaded.
QString install(QCoreApplication &app, const QString &code, bool *loaded = nullptr);

} // namespace language

} // namespace payonce::console
