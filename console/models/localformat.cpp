#include "localformat.h"

#include <QDateTime>

namespace payonce::console {

QString localAmount(qint64 fen, const QLocale &locale)
{
    // The magnitude as unsigned: -INT64_MIN does not fit a qint64.
    const quint64 magnitude = fen < 0 ? quint64(0) - quint64(fen) : quint64(fen);
    const QString whole = locale.toString(qulonglong(magnitude / 100));
    const QString cents = QStringLiteral("%1").arg(magnitude % 100, 2, 10, QLatin1Char('0'));
    return (fen < 0 ? locale.negativeSign() : QString()) + whole + locale.decimalPoint() + cents;
}

QString localTime(const QString &isoTime, const QLocale &locale)
{
    const QDateTime at = QDateTime::fromString(isoTime, Qt::ISODateWithMs);
    if (!at.isValid())
        return isoTime;
    return locale.toString(at.toLocalTime(), locale.dateFormat(QLocale::ShortFormat) + QStringLiteral(" HH:mm:ss t"));
}

} // namespace payonce::console
