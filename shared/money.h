#pragma once

#include <QString>
#include <QtGlobal>

#include <optional>

namespace payonce {

/// Money is integer minor units (fen) inside payonce and a decimal string on the wire.
/// A double never holds an amount anywhere: "0.1 + 0.2" is not a payment system's problem
/// to have.

/// Parses a wire amount: digits, optionally '.' and one or two digits, value > 0, at most
/// 15 integer digits (so any result fits a qint64 with room for sums). "99", "99.0",
/// "99.00" are 9900 fen; "-1", "0", "0.00", "1.234", "1e3", " 1", "1." and "" are refused.
std::optional<qint64> parseAmountFen(QStringView text);

/// Formats fen as the wire's decimal string with exactly two places: 9900 -> "99.00".
QString formatAmountFen(qint64 fen);

} // namespace payonce
