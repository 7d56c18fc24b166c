#include "core/orders/orderstatemachine.h"

#include <QTest>

#include <set>
#include <utility>

using namespace payonce::core;

Q_DECLARE_METATYPE(payonce::core::OrderStatus)

class TestOrderStateMachine : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every (from, to) pair of the six states, the expected answer written out here
    // independently of the table in orderstatemachine.cpp (docs/design.md's edges).
    void matrix_data()
    {
        using S = OrderStatus;
        const std::set<std::pair<S, S>> allowed{
            {S::Pending, S::Paying}, {S::Paying, S::Pending}, {S::Pending, S::Paid},       {S::Paying, S::Paid},
            {S::Pending, S::Closed}, {S::Paid, S::Refunding}, {S::Refunding, S::Refunded}, {S::Refunding, S::Paid},
        };
        QTest::addColumn<OrderStatus>("from");
        QTest::addColumn<OrderStatus>("to");
        QTest::addColumn<bool>("isAllowed");
        for (S from : allOrderStatuses) {
            for (S to : allOrderStatuses) {
                const QString row = orderStatusName(from) + QStringLiteral("->") + orderStatusName(to);
                QTest::newRow(qPrintable(row)) << from << to << allowed.contains({from, to});
            }
        }
    }
    void matrix()
    {
        QFETCH(OrderStatus, from);
        QFETCH(OrderStatus, to);
        QFETCH(bool, isAllowed);
        QCOMPARE(OrderStateMachine::isAllowed(from, to), isAllowed);
    }

    void selfLoopsAreRefused()
    {
        for (OrderStatus s : allOrderStatuses)
            QVERIFY(!OrderStateMachine::isAllowed(s, s));
    }

    void terminalStates()
    {
        QVERIFY(OrderStateMachine::isTerminal(OrderStatus::Closed));
        QVERIFY(OrderStateMachine::isTerminal(OrderStatus::Refunded));
        QVERIFY(!OrderStateMachine::isTerminal(OrderStatus::Paid));
        QVERIFY(!OrderStateMachine::isTerminal(OrderStatus::Pending));
    }

    void namesRoundTrip()
    {
        for (OrderStatus s : allOrderStatuses)
            QCOMPARE(orderStatusFromName(orderStatusName(s)), std::optional<OrderStatus>(s));
        QVERIFY(!orderStatusFromName(u"paid"));
        QVERIFY(!orderStatusFromName(u""));
    }
};

QTEST_GUILESS_MAIN(TestOrderStateMachine)
#include "tst_orderstatemachine.moc"
