#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace payonce::core {

/// Label name/value pairs of one series, in the order they are written.
using MetricLabels = QList<QPair<QString, QString>>;

/// Pieces of the Prometheus text exposition format 0.0.4, shared by the registry's
/// renderer and its tests. Pure functions.
namespace prometheus {

/// The Content-Type of a scrape.
inline constexpr char contentType[] = "text/plain; version=0.0.4; charset=utf-8";

/// A label value escaped: backslash, double quote and line feed as \\, \" and \n.
QByteArray escapeLabelValue(const QString &value);
/// HELP text escaped: backslash and line feed.
QByteArray escapeHelp(const QString &help);
/// {a="x",b="y"}, or nothing for no labels.
QByteArray labelSet(const MetricLabels &labels);
/// A sample value: integers without a fraction, +Inf/-Inf/NaN as the format spells them.
QByteArray formatValue(double value);
/// "# HELP name help\n# TYPE name type\n".
QByteArray header(const QString &name, const QString &help, const char *type);

} // namespace prometheus
} // namespace payonce::core
