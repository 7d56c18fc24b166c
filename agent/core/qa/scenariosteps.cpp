#include "scenariorunner_p.h"

namespace payonce::core {

using namespace scenario;

QString ScenarioRunner::Private::createOrders(Run &run, QList<Group> &groups)
{
    const QString skuId = run.id + QStringLiteral("-SKU");
    const ScenarioDriver::Headers auth{{"Authorization", options.authorization}};
    const DriverAnswer sku = agentCall(run, 0, "PUT", QStringLiteral("/api/v1/skus/") + skuId,
                                       {{QStringLiteral("stock"), run.params.orders}}, auth);
    if (sku.status != 200)
        return QStringLiteral("PUT sku: %1").arg(describe(sku));
    struct Item {
        int group;
        int index;
    };
    QList<Item> items;
    for (int g = 0; g < groups.size(); ++g) {
        for (int i = 0; i < groups[g].orderNos.size(); ++i)
            items.append({g, i});
    }
    return forEach(int(items.size()), run.params.concurrency, [&](int n) -> QString {
        const Group &group = groups.at(items.at(n).group);
        const int i = items.at(n).index;
        const QJsonObject order{
            {QStringLiteral("order_no"), group.orderNos.at(i)},
            {QStringLiteral("user_id"), group.userIds.at(i)},
            {QStringLiteral("amount"), QStringLiteral("%1.%2").arg(1 + n / 100).arg(n % 100, 2, 10, QLatin1Char('0'))},
            {QStringLiteral("items"),
             QJsonArray{QJsonObject{{QStringLiteral("sku_id"), skuId}, {QStringLiteral("qty"), 1}}}},
            {QStringLiteral("reward_coupon_template"), kCouponTemplate},
            {QStringLiteral("reward_points"), kRewardPoints}};
        const DriverAnswer created = agentCall(run, n, "POST", QStringLiteral("/api/v1/orders"), order, auth);
        if (created.status != 201)
            return QStringLiteral("POST order %1: %2").arg(group.orderNos.at(i), describe(created));
        ++run.created;
        return {};
    });
}

/// Every notification `duplicates` times at one instant, spread across the targets: the
/// simulator sends ceil(duplicates / targets) identical copies to each target at once.
QString ScenarioRunner::Private::runBurst(Run &run, Group &group)
{
    const int copies = (run.params.duplicates + int(run.params.targets.size()) - 1) / int(run.params.targets.size());
    QJsonArray urls;
    for (const QString &target : std::as_const(run.params.targets))
        urls.append(QString(target + QStringLiteral("/api/v1/callbacks/{channel}")));
    QString error = simControl(QStringLiteral("/sim/callback-targets"),
                               {{QStringLiteral("channel"), kChannel}, {QStringLiteral("urls"), urls}});
    if (error.isEmpty())
        error = simControl(QStringLiteral("/sim/faults"),
                           {{QStringLiteral("channel"), kChannel}, {QStringLiteral("duplicate"), copies}});
    if (error.isEmpty())
        error = confirmAndPay(run, group);
    // Back to one copy to the trade's own notify_url, whatever happened.
    const QString reset = simControl(QStringLiteral("/sim/faults"), {{QStringLiteral("channel"), kChannel}});
    const QString untarget = simControl(
        QStringLiteral("/sim/callback-targets"),
        {{QStringLiteral("channel"), kChannel}, {QStringLiteral("urls"), QJsonArray()}});
    return !error.isEmpty() ? error : !reset.isEmpty() ? reset : untarget;
}

/// The platform's re-delivery schedule × time_scale: after the first delivery, each
/// notification is sent again `duplicates` times, at the schedule's intervals.
QString ScenarioRunner::Private::runStorm(Run &run, Group &group)
{
    if (QString error = confirmAndPay(run, group); !error.isEmpty())
        return error;
    for (int k = 0; k < run.params.duplicates; ++k) {
        const int intervalS = kWeChatScheduleS[k % std::size(kWeChatScheduleS)];
        sleepFor(std::chrono::milliseconds(qint64(intervalS * 1000.0 * run.params.timeScale)));
        const QString error = forEach(int(group.paymentNos.size()), run.params.concurrency, [&](int i) -> QString {
            const DriverAnswer sent = driver.sim(
                "POST", QStringLiteral("/sim/notifications/%1/redeliver").arg(group.paymentNos.at(i)), {});
            if (sent.status != 200)
                return QStringLiteral("redeliver %1: %2").arg(group.paymentNos.at(i), describe(sent));
            ++run.redeliveries;
            return {};
        });
        if (!error.isEmpty())
            return error;
        setPhase(run, run.phase); // the same phase, the counts of this round
    }
    return {};
}

/// A queue that redelivers: once the order.paid events of these orders are delivered,
/// each is put back to pending and the dispatchers deliver it a second time (receivers
/// dedupe by Idempotency-Key = event id; the effects are not the outbox's to repeat).
QString ScenarioRunner::Private::runQueueRedelivery(Run &run, Group &group)
{
    if (QString error = confirmAndPay(run, group); !error.isEmpty())
        return error;
    const QString prefix = orderPrefix(run.id) + group.tag + QLatin1Char('-');
    const qint64 expected = group.orderNos.size();
    const auto allDelivered = [&]() -> Result<bool> {
        auto delivered = store.deliveredOutboxEvents(prefix);
        if (!delivered)
            return delivered.error();
        return delivered.value() >= expected;
    };
    if (QString error = waitUntil(options.settleTimeoutMs, QStringLiteral("order.paid delivered"), allDelivered);
        !error.isEmpty())
        return error;
    auto redelivered = store.redeliverOutboxEvents(prefix, clock.nowMs());
    if (!redelivered)
        return QStringLiteral("outbox redelivery: %1").arg(redelivered.error().internalMessage);
    run.outboxRedelivered += redelivered.value();
    return waitUntil(options.settleTimeoutMs, QStringLiteral("order.paid delivered again"), allDelivered);
}

/// The gateway times out (the simulator answers 504 to every create): the user's confirm
/// fails (503) and is replayed with the same key; then the gateway recovers and the user
/// confirms again (a new token and key: the failed payment record is reused), replays
/// that confirm once more (L1 answers it), and pays.
QString ScenarioRunner::Private::runGatewayReplay(Run &run, Group &group)
{
    QString error = simControl(QStringLiteral("/sim/faults"), {{QStringLiteral("channel"), kChannel},
                                                               {QStringLiteral("error_rate"), 1.0},
                                                               {QStringLiteral("error_status"), 504}});
    if (error.isEmpty()) {
        error = forEach(int(group.orderNos.size()), run.params.concurrency, [&](int i) -> QString {
            const QString key = group.orderNos.at(i) + QStringLiteral("-timeout");
            QString token;
            const DriverAnswer first = confirmOnce(run, i, group.orderNos.at(i), group.userIds.at(i), key, &token);
            if (first.status == 200)
                return QStringLiteral("confirm %1 succeeded through a failing gateway").arg(group.orderNos.at(i));
            // The client replays the very same request (key, token, body) after the timeout.
            confirmWithKey(run, i, group.orderNos.at(i), group.userIds.at(i), key, token);
            return {};
        });
    }
    const QString reset = simControl(QStringLiteral("/sim/faults"), {{QStringLiteral("channel"), kChannel}});
    if (!error.isEmpty() || !reset.isEmpty())
        return !error.isEmpty() ? error : reset;
    return forEach(int(group.orderNos.size()), run.params.concurrency, [&](int i) -> QString {
        const QString orderNo = group.orderNos.at(i);
        const QString keyPrefix = orderNo + QStringLiteral("-again");
        const Confirmed confirmed = confirmUntilAccepted(run, i, orderNo, group.userIds.at(i), keyPrefix);
        if (!confirmed.error.isEmpty())
            return confirmed.error;
        group.paymentNos[i] = confirmed.paymentNo;
        // The same request once more after it succeeded (a client retrying a lost answer):
        // the stored answer from the L1 record, never a second payment.
        confirmWithKey(run, i, orderNo, group.userIds.at(i), confirmed.key, confirmed.token);
        return simPay(run, confirmed.paymentNo);
    });
}

} // namespace payonce::core
