#include "money.h"

namespace payonce {

std::optional<qint64> parseAmountFen(QStringView text)
{
    constexpr int maxIntegerDigits = 15;
    qsizetype i = 0;
    qint64 units = 0;
    int integerDigits = 0;
    while (i < text.size() && text[i].isDigit() && text[i].unicode() < 128) {
        if (++integerDigits > maxIntegerDigits)
            return std::nullopt;
        units = units * 10 + (text[i].unicode() - u'0');
        ++i;
    }
    if (integerDigits == 0)
        return std::nullopt;
    qint64 fen = units * 100;
    if (i < text.size()) {
        if (text[i] != u'.')
            return std::nullopt;
        ++i;
        int fractionDigits = 0;
        qint64 fraction = 0;
        while (i < text.size() && text[i].unicode() >= u'0' && text[i].unicode() <= u'9') {
            if (++fractionDigits > 2)
                return std::nullopt;
            fraction = fraction * 10 + (text[i].unicode() - u'0');
            ++i;
        }
        if (fractionDigits == 0 || i != text.size())
            return std::nullopt;
        fen += fractionDigits == 1 ? fraction * 10 : fraction;
    }
    if (fen <= 0)
        return std::nullopt;
    return fen;
}

QString formatAmountFen(qint64 fen)
{
    const bool negative = fen < 0;
    const quint64 magnitude = negative ? quint64(0) - quint64(fen) : quint64(fen);
    QString text = QString::number(magnitude / 100) + u'.'
                   + QStringLiteral("%1").arg(magnitude % 100, 2, 10, QLatin1Char('0'));
    return negative ? u'-' + text : text;
}

} // namespace payonce
