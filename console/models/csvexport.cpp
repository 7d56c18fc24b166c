#include "csvexport.h"

#include <QAbstractItemModel>
#include <QIODevice>
#include <QStringList>

namespace payonce::console {

namespace {

QString csvField(const QString &text)
{
    if (!text.contains(u',') && !text.contains(u'"') && !text.contains(u'\n') && !text.contains(u'\r'))
        return text;
    QString quoted = text;
    quoted.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return u'"' + quoted + u'"';
}

bool writeLine(QIODevice &out, const QStringList &fields)
{
    const QByteArray line = fields.join(u',').toUtf8() + "\r\n";
    return out.write(line) == line.size();
}

} // namespace

bool writeCsv(const QAbstractItemModel &model, QIODevice &out)
{
    QStringList header;
    for (int column = 0; column < model.columnCount(); ++column)
        header << csvField(model.headerData(column, Qt::Horizontal).toString());
    if (!writeLine(out, header))
        return false;
    for (int row = 0; row < model.rowCount(); ++row) {
        QStringList fields;
        for (int column = 0; column < model.columnCount(); ++column)
            fields << csvField(model.index(row, column).data().toString());
        if (!writeLine(out, fields))
            return false;
    }
    return true;
}

} // namespace payonce::console
