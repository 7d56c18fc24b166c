#include "tokenname.h"

#include <QStringList>

namespace payonce::config {

namespace {

QString scriptName(QChar::Script script)
{
    switch (script) {
    case QChar::Script_Latin: return QStringLiteral("Latin");
    case QChar::Script_Cyrillic: return QStringLiteral("Cyrillic");
    case QChar::Script_Greek: return QStringLiteral("Greek");
    case QChar::Script_Armenian: return QStringLiteral("Armenian");
    case QChar::Script_Hebrew: return QStringLiteral("Hebrew");
    case QChar::Script_Arabic: return QStringLiteral("Arabic");
    case QChar::Script_Georgian: return QStringLiteral("Georgian");
    case QChar::Script_Han: return QStringLiteral("Han");
    case QChar::Script_Hiragana: return QStringLiteral("Hiragana");
    case QChar::Script_Katakana: return QStringLiteral("Katakana");
    case QChar::Script_Hangul: return QStringLiteral("Hangul");
    case QChar::Script_Thai: return QStringLiteral("Thai");
    case QChar::Script_Devanagari: return QStringLiteral("Devanagari");
    default: return QStringLiteral("script %1").arg(int(script));
    }
}

bool isInvisible(char32_t ch)
{
    switch (QChar::category(ch)) {
    case QChar::Other_Control:
    case QChar::Other_Format: // zero-width space, joiners, direction marks
    case QChar::Other_Surrogate:
    case QChar::Other_PrivateUse:
    case QChar::Other_NotAssigned:
    case QChar::Separator_Line:
    case QChar::Separator_Paragraph: return true;
    default: return false;
    }
}

} // namespace

std::optional<TokenName> TokenName::parse(const QString &written, QString *why)
{
    const QString name = written.trimmed().normalized(QString::NormalizationForm_KC);
    if (name.isEmpty()) {
        *why = QStringLiteral("is empty");
        return std::nullopt;
    }
    QStringList scripts;
    for (const char32_t ch : name.toUcs4()) {
        if (isInvisible(ch)) {
            *why = QStringLiteral("\"%1\" holds an invisible or control character").arg(written);
            return std::nullopt;
        }
        // Hiragana and Katakana are written together with Han in Japanese names.
        QChar::Script script = QChar::script(ch);
        if (script == QChar::Script_Hiragana || script == QChar::Script_Katakana)
            script = QChar::Script_Han;
        if (script == QChar::Script_Common || script == QChar::Script_Inherited)
            continue;
        const QString scriptText = scriptName(script);
        if (!scripts.contains(scriptText))
            scripts << scriptText;
    }
    if (scripts.size() > 1) {
        *why = QStringLiteral("\"%1\" mixes scripts (%2)").arg(written, scripts.join(QStringLiteral(", ")));
        return std::nullopt;
    }
    return TokenName{name, name.toCaseFolded()};
}

} // namespace payonce::config
