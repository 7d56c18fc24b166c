#include "core/callback/callbackworker.h"

#include "core/ports/clock.h"
#include "core/ports/paymentgateway.h"

#include "logging/categories.h"

#include <QJsonObject>
#include <QSet>

namespace payonce::core {

CallbackWorker::CallbackWorker(CallbackPipeline &pipeline, CallbackStore &store, CallbackModeStore &modes,
                               const Clock &clock, qint64 minAgeMs)
    : m_pipeline(pipeline), m_store(store), m_modes(modes), m_clock(clock), m_minAgeMs(minAgeMs)
{
}

CallbackWorker::Report CallbackWorker::runOnce(int limit)
{
    Report report;
    auto mode = m_modes.mode();
    if (!mode.ok()) {
        qCWarning(payonce::lcCore) << "callback worker: mode not readable:" << mode.error().internalMessage;
        return report;
    }
    report.modeRead = true;
    if (mode.value().mode == CallbackMode::AcceptOnly) {
        report.acceptOnly = true;
        return report;
    }
    auto rows = m_store.listAccepted(m_clock.nowMs() - m_minAgeMs, limit);
    if (!rows.ok()) {
        qCWarning(payonce::lcCore) << "callback worker: accepted rows not readable:" << rows.error().internalMessage;
        return report;
    }
    for (const AcceptedCallback &row : rows.value()) {
        ++report.seen;
        CallbackOutcome out;
        if (row.deliveryId) {
            out = m_pipeline.finishAccepted(row);
        } else if (auto settled = settleByQuery(row)) {
            ++report.byQuery;
            out = *settled;
        } else {
            ++report.failed;
            continue;
        }
        if (out.success() && out.note == QLatin1String("stale_fence")) {
            // Answered SUCCESS to the platform, but nothing was written: the row is not done.
            ++report.failed;
            ++report.staleFence;
            staleFenceRefused(row);
        } else if (out.success() && leavesTheRowAccepted(out)) {
            // Its lock is held elsewhere (or was lost before COMMIT), or accept-only began:
            // the row is still `accepted`, the next run tries again.
            ++report.failed;
            ++report.busy;
        } else if (out.success()) {
            ++report.finished;
            std::lock_guard guard(m_mutex);
            m_staleTries.remove(channelName(row.channel) + QLatin1Char(':') + row.payNo);
        } else {
            ++report.failed;
            qCWarning(payonce::lcCore) << "callback worker:" << row.payNo
                                       << "not finished:" << callbackOutcomeName(out.code) << out.note << out.message;
        }
    }
    if (rows.value().size() < limit) {
        // Every accepted row was listed: a row not among them is no longer accepted
        // (finished elsewhere), its refusals are history.
        QSet<QString> listed;
        for (const AcceptedCallback &row : rows.value())
            listed.insert(channelName(row.channel) + QLatin1Char(':') + row.payNo);
        std::lock_guard guard(m_mutex);
        m_staleTries.removeIf([&](const auto &entry) { return !listed.contains(entry.key()); });
    }
    return report;
}

bool CallbackWorker::leavesTheRowAccepted(const CallbackOutcome &outcome)
{
    // The SUCCESS answers that a durable row backs without having settled it (rule 8).
    return outcome.note == QLatin1String("lock_busy_durable") || outcome.note == QLatin1String("lock_lost")
           || outcome.note == QLatin1String("stale_fence") || outcome.note == QLatin1String("accept_only");
}

std::optional<CallbackOutcome> CallbackWorker::settleByQuery(const AcceptedCallback &row)
{
    // The row was written from the platform's query (the patrol, the closer) and has no
    // delivery to verify again: the platform is asked again, and a trade it still reports
    // paid by this pay_no is settled whatever the order's status (PAID by another pay_no or
    // CLOSED: a double payment, acknowledged with its finding).
    PaymentGateway *gateway = m_gateways ? m_gateways(row.channel) : nullptr;
    if (!gateway || row.paymentNo.isEmpty()) {
        qCWarning(payonce::lcCore) << "callback worker:" << row.payNo << "has no delivery and"
                                   << (gateway ? "no payment number to query" : "no gateway to query")
                                   << "; left to the patrol";
        return std::nullopt;
    }
    auto trade = gateway->query(row.paymentNo);
    if (!trade.ok()) {
        qCWarning(payonce::lcCore) << "callback worker: query of" << row.paymentNo << "for" << row.payNo
                                   << "failed:" << trade.error().internalMessage;
        return std::nullopt;
    }
    if (trade.value().state != GatewayTradeState::Paid || trade.value().payNo != row.payNo) {
        qCWarning(payonce::lcCore) << "callback worker:" << row.paymentNo << "is" << tradeStateName(trade.value().state)
                                   << "by" << trade.value().payNo << "at the platform, the row says paid by"
                                   << row.payNo << "; left to the patrol";
        return std::nullopt;
    }
    return m_pipeline.settleConfirmed(confirmedByQuery(row.channel, row.paymentNo, trade.value()), {});
}

void CallbackWorker::staleFenceRefused(const AcceptedCallback &row)
{
    const QString subject = channelName(row.channel) + QLatin1Char(':') + row.payNo;
    int tries = 0;
    {
        std::lock_guard guard(m_mutex);
        tries = ++m_staleTries[subject];
    }
    qCWarning(payonce::lcCore) << "callback worker:" << row.payNo << "refused as a stale fence" << tries << "time(s)";
    if (tries < StaleFenceTriesBeforeFinding)
        return;
    const CallbackFinding finding{QStringLiteral("stuck_accepted"), subject, row.orderNo, row.payNo,
                                  QJsonObject{{QStringLiteral("reason"), QStringLiteral("stale_fence")},
                                              {QStringLiteral("stale_fence_tries"), tries},
                                              {QStringLiteral("has_delivery"), true},
                                              {QStringLiteral("accepted_at_ms"), row.createdAtMs},
                                              {QStringLiteral("proposal"),
                                               QStringLiteral("the order carries a fencing token above the key "
                                                              "store's: check fence_epochs and the Redis fence state, "
                                                              "then replay")}}};
    if (auto raised = m_store.raiseFinding(finding); !raised.ok())
        qCWarning(payonce::lcCore) << "callback worker: finding for" << row.payNo
                                   << "not raised:" << raised.error().internalMessage;
}

} // namespace payonce::core
