#pragma once

class QAbstractItemModel;
class QIODevice;

namespace payonce::console {

/// Writes a table model as CSV (RFC 4180: a header row of the column titles, fields
/// quoted when they hold a comma, quote or line break, CRLF line ends), as the model
/// shows it (Qt::DisplayRole), so a filtered, sorted proxy exports what is on screen.
/// False when the device refused a write.
bool writeCsv(const QAbstractItemModel &model, QIODevice &out);

} // namespace payonce::console
