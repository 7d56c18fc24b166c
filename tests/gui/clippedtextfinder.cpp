#include "clippedtextfinder.h"

#include "consoletestsupport.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QTabBar>
#include <QToolButton>
#include <QWidget>

namespace payonce::testsupport {

namespace {

/// A size the layout was told it may ignore: the widget asked to be cut, not to be read whole.
bool mayBeCut(const QWidget *w)
{
    return w->sizePolicy().horizontalPolicy() == QSizePolicy::Ignored;
}

} // namespace

void ClippedTextFinder::report(QWidget *w, const QString &text, int got, int needs, const char *dimension)
{
    m_found.insert(QStringLiteral("%1: \"%2\" %3 %4 px, needs %5 px")
                       .arg(widgetPath(w), text, QString::fromLatin1(dimension))
                       .arg(got)
                       .arg(needs));
}

void ClippedTextFinder::walk(QWidget *window)
{
    QList<QWidget *> widgets = window->findChildren<QWidget *>();
    widgets.prepend(window);
    for (QWidget *w : std::as_const(widgets)) {
        if (!w->isVisible() || mayBeCut(w))
            continue;
        if (auto *label = qobject_cast<QLabel *>(w)) {
            if (label->text().isEmpty())
                continue;
            if (label->wordWrap()) {
                // Wrapped text grows downwards: it is cut when the height it got is below
                // what its width needs.
                const int needs = label->heightForWidth(label->width());
                if (needs > 0 && label->height() < needs)
                    report(label, label->text(), label->height(), needs, "high");
            } else {
                const QSize needs = label->minimumSizeHint();
                if (label->width() < needs.width())
                    report(label, label->text(), label->width(), needs.width(), "wide");
                if (label->height() < needs.height())
                    report(label, label->text(), label->height(), needs.height(), "high");
            }
        } else if (auto *button = qobject_cast<QAbstractButton *>(w)) {
            // A tool button in a tool bar shows an icon; the tab bar's scroll buttons none.
            if (button->text().isEmpty() || (qobject_cast<QToolButton *>(button) && !button->icon().isNull()))
                continue;
            const int needs = button->sizeHint().width();
            if (button->width() < needs)
                report(button, button->text(), button->width(), needs, "wide");
        } else if (auto *box = qobject_cast<QGroupBox *>(w)) {
            if (box->title().isEmpty())
                continue;
            const int needs = box->fontMetrics().horizontalAdvance(box->title());
            if (box->width() < needs)
                report(box, box->title(), box->width(), needs, "wide");
        } else if (auto *tabs = qobject_cast<QTabBar *>(w)) {
            // An elided tab is narrower than its title alone.
            for (int i = 0; i < tabs->count(); ++i) {
                const QString title = QString(tabs->tabText(i)).remove(u'&');
                const int got = tabs->tabRect(i).width();
                const int needs = tabs->fontMetrics().horizontalAdvance(title);
                if (got < needs)
                    report(tabs, title, got, needs, "wide");
            }
        }
    }
}

QStringList ClippedTextFinder::found() const
{
    QStringList sorted(m_found.cbegin(), m_found.cend());
    sorted.sort();
    return sorted;
}

} // namespace payonce::testsupport
