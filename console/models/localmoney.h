#pragma once

#include <QLocale>
#include <QString>
#include <QtGlobal>

namespace payonce::console {

/// An amount in fen as the reader's locale writes money: its digit grouping and decimal
/// mark, always two decimals ("1,234,567.89" in en_US and zh_CN, "1.234.567,89" in de_DE;
/// the C locale groups nothing: "1234567.89"). Integer arithmetic only: a double never
/// holds the amount. The wire keeps formatAmountFen (shared/money.h).
QString localAmount(qint64 fen, const QLocale &locale = QLocale());

} // namespace payonce::console
