#pragma once

#include <QLocale>
#include <QString>
#include <QtGlobal>

namespace payonce::console {

/// Money and times the way the reader's locale writes them (QLocale's default, which
/// language.cpp sets with the console's language). For what a sentence shows; table cells
/// keep the agent's wire values (data that is sorted, filtered, exported).

/// An amount in fen as the reader's locale writes money: its digit grouping and decimal
/// mark, always two decimals ("1,234,567.89" in en_US and zh_CN, "1.234.567,89" in de_DE;
/// the C locale groups nothing: "1234567.89"). Integer arithmetic only: a double never
/// holds the amount. The wire keeps formatAmountFen (shared/money.h).
QString localAmount(qint64 fen, const QLocale &locale = QLocale());

/// An ISO-8601 time of the agent ("2026-12-02T07:00:05.000Z") in the machine's time zone,
/// as the locale writes a short date, with seconds and the zone's name ("2026/12/2 15:00:05
/// CST" in zh_CN). Text that is not such a time is returned as it is.
QString localTime(const QString &isoTime, const QLocale &locale = QLocale());

} // namespace payonce::console
