#pragma once

// Text a window cuts off: a widget laid out smaller than its own text needs. Qt draws a
// label or a button narrower than its size hint by cutting the text at the widget's edge
// (no ellipsis), a group box's title likewise, and a tab bar with too little room elides
// its titles — what a longer translation does to a layout made for the English strings.

#include <QSet>
#include <QString>
#include <QStringList>

class QWidget;

namespace payonce::testsupport {

class ClippedTextFinder {
public:
    /// Every widget of `window` that is on screen now (itself included): labels, buttons,
    /// check boxes, radio buttons, group box titles and tab titles.
    void walk(QWidget *window);

    /// One line per clipped text: where, the text, the width it got and the width it needs.
    QStringList found() const;
    int count() const { return int(m_found.size()); }

private:
    void report(QWidget *w, const QString &text, int got, int needs, const char *dimension);

    QSet<QString> m_found;
};

} // namespace payonce::testsupport
