// The console in Simplified Chinese: with zh_CN loaded, every window and dialog of the
// console is opened — the main window's views one by one, connected to a real
// payonce-agent (SQLite, payonce-sim, qa.enabled) with a finding, a compensation and a QA
// run to show, and once unreachable for the banner; the menus, the connection dialog, the
// reason dialog and the wall screen — and every widget's text is read: labels, buttons,
// group boxes, tab titles, window titles, tooltips, placeholders, combo box items, menus
// and actions, table headers, the chart's axes and legend. A string that still holds an
// English word fails the test, unless the word is a name or a code listed in
// untranslated-allowlist.txt (the one place for them). The same windows, walked again,
// fail on a text the layout cuts off (clippedtextfinder.h).

#include "agentconfig.h"
#include "agentfixture.h"
#include "clippedtextfinder.h"
#include "consoletestsupport.h"
#include "storagefixture.h"

#include "console/app/connectiondialog.h"
#include "console/app/language.h"
#include "console/app/mainwindow.h"
#include "console/views/qcustomplot_include.h"
#include "console/views/reasondialog.h"
#include "console/views/wallscreen.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QGroupBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QTextDocument>

#include <functional>

using namespace payonce;
using namespace payonce::console;
using namespace payonce::testsupport;

namespace {

constexpr int kAgentTimeoutMs = 30000;

/// The allow-list's terms, longest first (so "WeChat Pay" goes before "WeChat").
QStringList allowedTerms()
{
    QFile file(QStringLiteral(PAYONCE_UNTRANSLATED_ALLOWLIST));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        qFatal("cannot read %s", PAYONCE_UNTRANSLATED_ALLOWLIST);
    QStringList terms;
    for (const QString &line : QString::fromUtf8(file.readAll()).split(u'\n')) {
        const QString term = line.trimmed();
        if (!term.isEmpty() && !term.startsWith(u'#'))
            terms << term;
    }
    std::sort(terms.begin(), terms.end(), [](const QString &a, const QString &b) { return a.size() > b.size(); });
    return terms;
}

/// Reads every string a person sees in a window and keeps those with English words left.
class EnglishFinder {
public:
    EnglishFinder()
    {
        for (const QString &term : allowedTerms())
            m_allowed << QRegularExpression(
                QStringLiteral("(?<![A-Za-z_.])%1(?![A-Za-z_])").arg(QRegularExpression::escape(term)));
    }

    /// Whether text, once names, codes, identifiers, URLs and mnemonics are taken out, holds a word of
    /// two or more Latin letters.
    bool isEnglish(const QString &shown) const
    {
        QString text = shown;
        if (Qt::mightBeRichText(text)) {
            QTextDocument document;
            document.setHtml(text);
            text = document.toPlainText();
        }
        text.remove(QRegularExpression(QStringLiteral("&(?=\\S)")));
        text.remove(QRegularExpression(QStringLiteral("[a-z][a-z0-9+.-]*://\\S*")));
        // Identifiers with a digit (qa-d83d8bfd, ORD-1, SKU-1 x2) are data, not words.
        text.remove(QRegularExpression(QStringLiteral("[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*")));
        for (const QRegularExpression &term : m_allowed)
            text.remove(term);
        return text.contains(QRegularExpression(QStringLiteral("[A-Za-z]{2,}")));
    }

    void check(const QString &where, const QString &text)
    {
        if (!text.isEmpty() && isEnglish(text))
            m_found.insert(QStringLiteral("%1: \"%2\"").arg(where, text));
    }

    void checkAction(const QString &where, QAction *action)
    {
        if (action->isSeparator())
            return;
        check(where + QStringLiteral(" action"), action->text());
        if (action->toolTip() != action->text().remove(u'&'))
            check(where + QStringLiteral(" action tooltip"), action->toolTip());
        check(where + QStringLiteral(" action status tip"), action->statusTip());
        if (QMenu *menu = action->menu())
            checkMenu(where, menu);
    }

    void checkMenu(const QString &where, QMenu *menu)
    {
        const QString path = where + QStringLiteral(" > ") + menu->title();
        check(path + QStringLiteral(" (menu)"), menu->title());
        for (QAction *action : menu->actions())
            checkAction(path, action);
    }

    /// Every widget of `window` (itself included), shown or not: a hidden label is shown
    /// in another state of the view.
    void walk(QWidget *window)
    {
        QList<QWidget *> widgets = window->findChildren<QWidget *>();
        widgets.prepend(window);
        for (QWidget *w : widgets) {
            const QString where = widgetPath(w);
            if (w->isWindow())
                check(where + QStringLiteral(" window title"), w->windowTitle());
            check(where + QStringLiteral(" tooltip"), w->toolTip());
            check(where + QStringLiteral(" status tip"), w->statusTip());
            check(where + QStringLiteral(" what's this"), w->whatsThis());
            if (auto *label = qobject_cast<QLabel *>(w))
                check(where, label->text());
            if (auto *button = qobject_cast<QAbstractButton *>(w))
                check(where, button->text());
            if (auto *box = qobject_cast<QGroupBox *>(w))
                check(where, box->title());
            if (auto *edit = qobject_cast<QLineEdit *>(w))
                check(where + QStringLiteral(" placeholder"), edit->placeholderText());
            if (auto *spin = qobject_cast<QAbstractSpinBox *>(w))
                check(where + QStringLiteral(" special value"), spin->specialValueText());
            if (auto *spin = qobject_cast<QSpinBox *>(w)) {
                check(where + QStringLiteral(" suffix"), spin->suffix());
                check(where + QStringLiteral(" prefix"), spin->prefix());
            }
            if (auto *combo = qobject_cast<QComboBox *>(w); combo && !combo->isEditable()) {
                for (int i = 0; i < combo->count(); ++i)
                    check(where + QStringLiteral(" item"), combo->itemText(i));
            }
            if (auto *tabs = qobject_cast<QTabWidget *>(w)) {
                for (int i = 0; i < tabs->count(); ++i) {
                    check(where + QStringLiteral(" tab"), tabs->tabText(i));
                    check(where + QStringLiteral(" tab tooltip"), tabs->tabToolTip(i));
                }
            }
            if (auto *view = qobject_cast<QAbstractItemView *>(w); view && view->model()) {
                const QAbstractItemModel *model = view->model();
                for (int c = 0; c < model->columnCount(); ++c) {
                    check(where + QStringLiteral(" header"), model->headerData(c, Qt::Horizontal).toString());
                    check(where + QStringLiteral(" header tooltip"),
                          model->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString());
                }
            }
            if (auto *bar = qobject_cast<QMenuBar *>(w)) {
                for (QAction *action : bar->actions())
                    checkAction(where, action);
            } else if (!qobject_cast<QMenu *>(w)) {
                for (QAction *action : w->actions())
                    checkAction(where, action);
            }
            if (auto *status = qobject_cast<QStatusBar *>(w))
                check(where + QStringLiteral(" message"), status->currentMessage());
            if (auto *plot = qobject_cast<QCustomPlot *>(w)) {
                for (QCPAxis *axis : plot->axisRect()->axes())
                    check(where + QStringLiteral(" axis"), axis->label());
                for (int g = 0; g < plot->graphCount(); ++g)
                    check(where + QStringLiteral(" graph"), plot->graph(g)->name());
            }
        }
    }

    QStringList found() const
    {
        QStringList sorted(m_found.cbegin(), m_found.cend());
        sorted.sort();
        return sorted;
    }
    int count() const { return int(m_found.size()); }

private:
    QList<QRegularExpression> m_allowed;
    QSet<QString> m_found;
};

} // namespace

class TestConsoleI18n : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        bool loaded = false;
        QCOMPARE(language::install(*qApp, QStringLiteral("zh_CN"), &loaded), QStringLiteral("zh_CN"));
        QVERIFY2(loaded, "the zh_CN translation is not built into the console");
        AgentProcess::Options options;
        options.extraConfig = QJsonObject{
            streamEvery(100),
            qaEnabled(),
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(Dialect::Sqlite, options), m_agent.error());
        QString error;
        // Something in every list: a paid order with a finding (extra points written
        // behind the keys' back) and the patrol's compensation, and a finished QA run.
        const QString orderNo = QStringLiteral("ORD-I18N-1");
        const QString payNo = m_agent->orderPaidAtSim(orderNo, 42, QStringLiteral("99.00"), QStringLiteral("SKU-I18N"),
                                                      &error);
        QVERIFY2(!payNo.isEmpty(), qPrintable(error));
        QVERIFY2(raiseEffectMismatch(*m_agent, m_agent.database(), orderNo, &error), qPrintable(error));
        const HttpAnswer qa = m_agent->call(
            "POST", QStringLiteral("/api/v1/qa/scenarios"),
            R"({"kind":"concurrent_burst","orders":4,"duplicates":2,"concurrency":2,"time_scale":0.001,"reason":"zh_CN pictures"})",
            kDesk);
        QVERIFY2(qa.status == 202 || qa.status == 200, qa.body.constData());
    }
    void cleanupTestCase() { m_agent.stop(); }

    void allowListSpareWordsOnlyAsWholeWords()
    {
        EnglishFinder finder;
        QVERIFY(!finder.isEnglish(QStringLiteral("支付宝 Alipay 熔断器 gateway.alipay")));
        QVERIFY(!finder.isEnglish(QStringLiteral("&K 键 (Ctrl+K)")));
        QVERIFY(!finder.isEnglish(QStringLiteral("连接到 http://127.0.0.1:8080")));
        QVERIFY(!finder.isEnglish(QStringLiteral("qa-d83d8bfd — 通过：订单 ORD-1，SKU-1 x2")));
        QVERIFY(finder.isEnglish(QStringLiteral("Payments")));
        QVERIFY(finder.isEnglish(QStringLiteral("支付 Alipayment")));
        QVERIFY(finder.isEnglish(QStringLiteral("<b>Live</b> 实时")));
    }

    void languageFollowsTheLocaleUnlessChosen_data()
    {
        QTest::addColumn<QString>("chosen");
        QTest::addColumn<QString>("system");
        QTest::addColumn<QString>("resolved");
        QTest::newRow("mainland system") << QString() << QStringLiteral("zh_CN") << QStringLiteral("zh_CN");
        QTest::newRow("Singapore system") << QString() << QStringLiteral("zh_SG") << QStringLiteral("zh_CN");
        QTest::newRow("Taiwan reads Traditional") << QString() << QStringLiteral("zh_TW") << QStringLiteral("en");
        QTest::newRow("Hong Kong reads Traditional") << QString() << QStringLiteral("zh_HK") << QStringLiteral("en");
        QTest::newRow("English system") << QString() << QStringLiteral("en_US") << QStringLiteral("en");
        QTest::newRow("German system: English words") << QString() << QStringLiteral("de_DE") << QStringLiteral("en");
        QTest::newRow("English chosen on a Chinese system")
            << QStringLiteral("en") << QStringLiteral("zh_CN") << QStringLiteral("en");
        QTest::newRow("Chinese chosen on an English system")
            << QStringLiteral("zh_CN") << QStringLiteral("en_US") << QStringLiteral("zh_CN");
    }
    void languageFollowsTheLocaleUnlessChosen()
    {
        QFETCH(QString, chosen);
        QFETCH(QString, system);
        QFETCH(QString, resolved);
        QCOMPARE(language::resolve(chosen, QLocale(system)), resolved);
    }

    // View → Language keeps the choice in the settings (this run's folder), checked in the
    // menu of the next window; "System language" forgets it.
    void theMenuRemembersTheChoice()
    {
        {
            MainWindow window;
            child<QAction>(&window, "language_zh_CN")->trigger();
            QCOMPARE(language::chosen(), QStringLiteral("zh_CN"));
        }
        MainWindow next;
        QVERIFY(child<QAction>(&next, "language_zh_CN")->isChecked());
        QVERIFY(!child<QAction>(&next, "language_en")->isChecked());
        child<QAction>(&next, "language_system")->trigger();
        QCOMPARE(language::chosen(), QString());
        QVERIFY(!QSettings().contains(QStringLiteral("view/language")));
    }

    void everyWindowOfTheConsoleIsInChinese()
    {
        EnglishFinder finder;
        walkEveryWindow([&](QWidget *shown) { finder.walk(shown); },
                        [&](const QString &where, QMenu *menu) { finder.checkMenu(where, menu); });
        if (QTest::currentTestFailed())
            return;
        // One line each (a failure message of QtTest is cut short).
        for (const QString &line : finder.found())
            qWarning().noquote() << "still in English:" << line;
        QVERIFY2(finder.count() == 0,
                 qPrintable(QStringLiteral("%1 strings still in English (listed above)").arg(finder.count())));
    }

    // The same windows in Chinese, the main window at its own size (1200 × 800), the wall
    // screen full screen on a 720p screen (the test's offscreen screen, CMakeLists.txt): no
    // label, button, group box or tab shows less than its whole text.
    void noTextIsCutOffInChinese()
    {
        ClippedTextFinder clipped;
        walkEveryWindow([&](QWidget *shown) { clipped.walk(shown); }, {});
        if (QTest::currentTestFailed())
            return;
        for (const QString &line : clipped.found())
            qWarning().noquote() << "cut off:" << line;
        QVERIFY2(clipped.count() == 0,
                 qPrintable(QStringLiteral("%1 texts cut off (listed above)").arg(clipped.count())));
    }

private:
    /// Opens every window and dialog of the console, each in every state the test can give
    /// it, and hands each to `look` while it is on screen; `lookAtMenu` gets the menu bar's
    /// menus.
    void walkEveryWindow(const std::function<void(QWidget *)> &look,
                         const std::function<void(const QString &, QMenu *)> &lookAtMenu)
    {
        auto window = openTestedConsole(m_agent->port(), kLeadToken);
        QTRY_COMPARE_WITH_TIMEOUT(window->stream()->state(), StreamClient::State::Live, kAgentTimeoutMs);
        // The status bar's notices: a money finding (standing) and another (passing).
        const auto raised = [&](const QString &kind) {
            const StreamEvent event{streamevent::FindingRaised,
                                    QStringLiteral("order:ORD-I18N-1"),
                                    kind,
                                    QStringLiteral("system:patrol"),
                                    QString(),
                                    QJsonObject{{QStringLiteral("order_no"), QStringLiteral("ORD-I18N-1")}}};
            Q_EMIT window->stream()->messageReceived(StreamMessage{1, QDateTime::currentDateTimeUtc(), event});
        };
        raised(QStringLiteral("double_payment"));
        raised(QStringLiteral("effect_mismatch"));
        QVERIFY(child<QLabel>(window.get(), "findingNotice")->isVisible());
        look(window.get());
        for (int i = 0; i < window->views()->count(); ++i) {
            window->views()->setCurrentIndex(i);
            QTest::qWait(300); // its lists answer
            look(window.get());
        }
        const auto menus = window->menuBar()->actions();
        for (QAction *menu : menus) {
            if (menu->menu() && lookAtMenu)
                lookAtMenu(QStringLiteral("menu bar"), menu->menu());
        }

        window->askConnection();
        QDialog *connection = window->findChild<QDialog *>(QStringLiteral("connectionDialog"));
        QVERIFY(connection);
        QTRY_VERIFY(connection->isVisible());
        look(connection);
        connection->reject();

        ReasonDialog reason(QString(), QString(), true, window.get());
        reason.show();
        look(&reason);

        window->wall()->enter();
        QTRY_VERIFY(window->wall()->isVisible());
        QTest::qWait(300);
        look(window->wall());
        window->wall()->leave();

        // Unreachable: the banner and the reconnecting state.
        auto lost = std::make_unique<MainWindow>();
        lost->show();
        lost->connectTo(QUrl(QStringLiteral("http://127.0.0.1:1")), kLeadToken);
        QTRY_VERIFY_WITH_TIMEOUT(child<QLabel>(lost.get(), "connectionBanner")->isVisible(), kAgentTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(lost->stream()->state(), StreamClient::State::WaitingToReconnect, kAgentTimeoutMs);
        look(lost.get());
    }

    AgentFixture m_agent;
};

int main(int argc, char *argv[])
{
    return runConsoleTest<TestConsoleI18n>(argc, argv, QStringLiteral("tst_consolei18n"));
}

#include "tst_consolei18n.moc"
