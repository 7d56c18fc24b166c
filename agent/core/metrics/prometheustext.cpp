#include "core/metrics/prometheustext.h"

#include <QLocale>

#include <cmath>

namespace payonce::core::prometheus {

QByteArray escapeLabelValue(const QString &value)
{
    QByteArray out;
    const QByteArray utf8 = value.toUtf8();
    out.reserve(utf8.size());
    for (char ch : utf8) {
        switch (ch) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\n': out += "\\n"; break;
        default: out += ch;
        }
    }
    return out;
}

QByteArray escapeHelp(const QString &help)
{
    QByteArray out;
    for (char ch : help.toUtf8()) {
        if (ch == '\\')
            out += "\\\\";
        else if (ch == '\n')
            out += "\\n";
        else
            out += ch;
    }
    return out;
}

QByteArray labelSet(const MetricLabels &labels)
{
    if (labels.isEmpty())
        return {};
    QByteArray out = "{";
    for (qsizetype i = 0; i < labels.size(); ++i) {
        if (i > 0)
            out += ',';
        out += labels.at(i).first.toLatin1() + "=\"" + escapeLabelValue(labels.at(i).second) + '"';
    }
    out += '}';
    return out;
}

QByteArray formatValue(double value)
{
    if (std::isnan(value))
        return QByteArrayLiteral("NaN");
    if (std::isinf(value))
        return value > 0 ? QByteArrayLiteral("+Inf") : QByteArrayLiteral("-Inf");
    if (value == std::floor(value) && std::fabs(value) < 9.0e15)
        return QByteArray::number(qint64(value));
    return QString::number(value, 'g', QLocale::FloatingPointShortest).toLatin1();
}

QByteArray header(const QString &name, const QString &help, const char *type)
{
    return "# HELP " + name.toLatin1() + ' ' + escapeHelp(help) + "\n# TYPE " + name.toLatin1() + ' ' + type + '\n';
}

} // namespace payonce::core::prometheus
