#include "language.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QSettings>
#include <QTranslator>

namespace payonce::console::language {

namespace {

const auto kSettingsKey = QStringLiteral("view/language");
const auto kChinese = QStringLiteral("zh_CN");
const auto kEnglish = QStringLiteral("en");

} // namespace

QList<Choice> choices()
{
    return {{QString(), QCoreApplication::translate("payonce::console::language", "System language")},
            {kEnglish, QStringLiteral("English")},
            {kChinese, QStringLiteral("简体中文")}};
}

QString chosen()
{
    return QSettings().value(kSettingsKey).toString();
}

void choose(const QString &code)
{
    if (code.isEmpty())
        QSettings().remove(kSettingsKey);
    else
        QSettings().setValue(kSettingsKey, code);
}

QString resolve(const QString &code, const QLocale &system)
{
    if (code == kChinese || code == kEnglish)
        return code;
    // Taiwan and Hong Kong read Traditional script: English is nearer than Simplified.
    if (system.language() == QLocale::Chinese && system.script() != QLocale::TraditionalChineseScript
        && system.territory() != QLocale::Taiwan && system.territory() != QLocale::HongKong
        && system.territory() != QLocale::Macau)
        return kChinese;
    return kEnglish;
}

QString install(QCoreApplication &app, const QString &code, bool *loaded)
{
    const QString resolved = resolve(code);
    bool ok = true;
    if (resolved == kChinese) {
        auto *ours = new QTranslator(&app);
        ok = ours->load(QStringLiteral(":/i18n/payonce_console_zh_CN.qm"));
        if (ok)
            QCoreApplication::installTranslator(ours);
        // Qt's own words (OK, Cancel, the file dialog) from the system's qtbase
        // translations; without them only those stay English.
        auto *qt = new QTranslator(&app);
        if (qt->load(QLocale(kChinese), QStringLiteral("qtbase"), QStringLiteral("_"),
                     QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
            QCoreApplication::installTranslator(qt);
        QLocale::setDefault(QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China));
    } else if (code == kEnglish) {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    } else {
        // English words, the system's way of writing numbers, money and times.
        QLocale::setDefault(QLocale::system());
    }
    if (loaded)
        *loaded = ok;
    return resolved;
}

} // namespace payonce::console::language
