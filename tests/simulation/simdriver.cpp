#include "simdriver.h"

#include "core/ports/auditwriter.h"
#include "core/qa/mutants.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace payonce::simulation {

using core::CallbackHookPoint;
using core::Channel;
using core::CompensationKind;

namespace {

const QStringList kSkus{QStringLiteral("SKU-1"), QStringLiteral("SKU-2"), QStringLiteral("SKU-3"),
                        QStringLiteral("SKU-4"), QStringLiteral("SKU-5")};
constexpr qint64 kInitialStock = 60;
const QString kDesk = QStringLiteral("desk:alice");
const QString kDesk2 = QStringLiteral("desk:bob");
const QString kLead = QStringLiteral("lead:carol");

QString channelText(Channel c)
{
    return core::channelName(c);
}

QString outcomeText(const core::CallbackOutcome &o)
{
    return QStringLiteral("%1 (%2, %3)").arg(core::callbackOutcomeName(o.code), layerName(o.layer), o.note);
}

QString errorText(const core::Error &e)
{
    return e.contractCode.isEmpty() ? QStringLiteral("error %1").arg(core::errorCodeName(e.code))
                                    : QStringLiteral("error %1 (%2)").arg(core::errorCodeName(e.code), e.contractCode);
}

} // namespace

QStringList mutantNames()
{
    return {QStringLiteral("stock-restore-unkeyed"), QStringLiteral("cas-ignores-status"),
            QStringLiteral("unlock-before-commit"),  QStringLiteral("skip-unique-index"),
            QStringLiteral("approve-own-proposal"),  QStringLiteral("refund-over-amount"),
            QStringLiteral("duplicate-outbox")};
}

/// What one operation reports: the orders it touched (their invariants are checked after
/// it) or `broad` (it may have touched any: every order is checked).
struct SimDriver::Op {
    int number = 0;
    QStringList touched;
    bool broad = false;
};

/// The outbox's receiver: at-least-once means again only after a failure or a crash, so
/// an event delivered once and handed over again is a duplicate (outbox-once).
class SimDriver::OnceHandler final : public core::OutboxHandler {
public:
    explicit OnceHandler(std::optional<Violation> &violation) : m_violation(violation) {}
    int failPercent = 0;
    SimRandom *random = nullptr;

    core::Result<void> deliver(const core::OutboxEvent &event) override
    {
        if (m_delivered.contains(event.eventId) && !m_violation) {
            m_violation = Violation{QStringLiteral("outbox-once"),
                                    QStringLiteral("event %1 (%2) was handed to its handler again after it was "
                                                   "delivered")
                                        .arg(event.eventId, event.eventType)};
        }
        if (random && random->chance(failPercent))
            return core::Error::make(core::ErrorCode::Unavailable, QStringLiteral("sim receiver: 503"));
        m_delivered.insert(event.eventId);
        return {};
    }
    void crashed() {} // delivered events stay delivered: a crash happens between operations

private:
    std::optional<Violation> &m_violation;
    QSet<QString> m_delivered;
};

SimDriver::SimDriver(RunOptions options)
    : m_options(std::move(options)), m_random(m_options.seed), m_platform(m_clock, m_random)
{
    m_handler = std::make_shared<OnceHandler>(m_opViolation);
    m_handler->random = &m_random;
    m_handlers.setFallback(m_handler);
    QMap<QString, qint64> initial;
    for (const QString &sku : kSkus)
        initial.insert(sku, kInitialStock);
    m_ledger = std::make_unique<LedgerInvariants>(initial, m_platform);
}

SimDriver::~SimDriver() = default;

core::Result<void> SimDriver::rebuild()
{
    m_world.reset();
    SimWorld::Options options;
    options.url = m_options.url;
    if (m_options.mutant == u"unlock-before-commit") {
        options.qaSwitches = true;
        options.switches.unlockBeforeCommit = true;
    } else if (m_options.mutant == u"skip-unique-index") {
        options.qaSwitches = true;
        options.switches.disableUniqueIndex = true;
    }
    auto built = SimWorld::build(options, m_clock, m_platform, m_probe, m_handlers);
    if (!built)
        return built.error();
    m_world = std::move(built).value();
    return {};
}

std::optional<Violation> SimDriver::checkAll(const QStringList &orders)
{
    if (m_opViolation)
        return m_opViolation;
    return m_ledger->check(*m_world->database, orders);
}

RunResult SimDriver::run()
{
    using core::mutants::Mutant;
    RunResult result;
    const QHash<QString, Mutant> hooks{{QStringLiteral("stock-restore-unkeyed"), Mutant::StockRestoreUnkeyed},
                                       {QStringLiteral("cas-ignores-status"), Mutant::CasIgnoresStatus},
                                       {QStringLiteral("approve-own-proposal"), Mutant::ApproveOwnProposal},
                                       {QStringLiteral("refund-over-amount"), Mutant::RefundOverAmount},
                                       {QStringLiteral("duplicate-outbox"), Mutant::DuplicateOutbox}};
#ifdef PAYONCE_SIMULATION_MUTANTS
    if (hooks.contains(m_options.mutant))
        core::mutants::switchOn(hooks.value(m_options.mutant));
#endif
    if (auto built = rebuild(); !built) {
        result.violation = Violation{QStringLiteral("storage"), built.error().internalMessage};
        return result;
    }
    for (const QString &sku : kSkus) {
        auto set = m_world->setup->setSkuStock(sku, kInitialStock);
        if (!set) {
            result.violation = Violation{QStringLiteral("storage"), set.error().message};
            return result;
        }
    }
    for (int n = 1; n <= m_options.steps; ++n) {
        result.stepsRun = n;
        if (auto v = step(n)) {
            result.violation = v;
            result.violationStep = n;
            return result;
        }
        if (n % 1000 == 0 && m_options.report) {
            m_options.report(QStringLiteral("step %1: orders %2 (PAID %3, REFUNDING %4, REFUNDED %5, CLOSED %6, "
                                            "PAYING %7) · deliveries %8 (%10 answered from memory) · crashes %9 · "
                                            "violations 0")
                                 .arg(n)
                                 .arg(m_orders.size())
                                 .arg(m_ledger->ordersIn(QStringLiteral("PAID")).size())
                                 .arg(m_ledger->ordersIn(QStringLiteral("REFUNDING")).size())
                                 .arg(m_ledger->ordersIn(QStringLiteral("REFUNDED")).size())
                                 .arg(m_ledger->ordersIn(QStringLiteral("CLOSED")).size())
                                 .arg(m_ledger->ordersIn(QStringLiteral("PAYING")).size())
                                 .arg(m_deliveries)
                                 .arg(m_crashes)
                                 .arg(m_answeredFromMemory));
        }
    }
    if (auto v = quiesce()) {
        result.violation = v;
        result.violationStep = m_options.steps + 1;
    }
    return result;
}

std::optional<Violation> SimDriver::step(int number)
{
    Op op;
    op.number = number;
    m_probe.pipelineEvents.clear();
    const bool canCreate = m_orders.size() < m_options.maxOrders;
    QString line;
    switch (m_random.weighted(
        {canCreate ? 9 : 0, 12, 10, 24, 3, 2, 2, 4, 2, 4, 5, 4, 5, 3, 2, 2, 2, 6, 2, 4, 1, 2, 2, 4})) {
    case 0: line = opCreateOrder(op); break;
    case 1: line = opConfirm(op); break;
    case 2: line = opUserPays(op); break;
    case 3: line = opDeliver(op, false); break;
    case 4: line = opStrayPayment(op, false); break;
    case 5: line = opStrayPayment(op, true); break;
    case 6: line = opAmountChanged(op); break;
    case 7: line = opWorker(op); break;
    case 8: line = opMode(op); break;
    case 9: line = opReplay(op); break;
    case 10: line = opRefundOwn(op); break;
    case 11: line = opRefundStray(op); break;
    case 12: line = opRefundFinish(op); break;
    case 13: line = opRefundResend(op); break;
    case 14: line = opRefundFollowUp(op); break;
    case 15: line = opClose(op); break;
    case 16: line = opPatrol(op); break;
    case 17: line = opCompensation(op); break;
    case 18: line = opApproveProposals(op); break;
    case 19: line = opOutbox(op); break;
    case 20: line = opRedrive(op); break;
    case 21: line = opCrash(op); break;
    case 22: line = opClock(op); break;
    default: line = opRefundPartial(op); break;
    }
    m_clock.advance(m_random.between(20, 400));
    const QString traced = QStringLiteral("%1 %2").arg(number, 5).arg(line);
    m_lastOps.append(traced);
    if (m_lastOps.size() > 30)
        m_lastOps.removeFirst();
    if (m_options.traceLine)
        m_options.traceLine(traced);
    if (m_opViolation)
        return m_opViolation;
    // The orders an operation touched after every step; every order when it may have
    // touched any, and every 100 steps whatever it did.
    if (op.broad || number % 100 == 0)
        return checkAll({});
    if (op.touched.isEmpty())
        return checkAll({QStringLiteral("-")}); // the global stock ledger only
    return checkAll(op.touched);
}

QString SimDriver::pickOrder(const QStringList &preferred)
{
    if (!preferred.isEmpty() && m_random.chance(80))
        return preferred.at(int(m_random.below(preferred.size())));
    if (m_orders.isEmpty())
        return {};
    return m_orders.at(int(m_random.below(m_orders.size()))).orderNo;
}

QString SimDriver::opCreateOrder(Op &op)
{
    core::OrderDraft draft;
    draft.orderNo = QStringLiteral("SIM%1").arg(m_orders.size() + 1, 5, 10, QLatin1Char('0'));
    draft.userId = m_random.between(1, 6);
    draft.amountFen = m_random.between(100, 20000);
    const int lines = int(m_random.between(1, 2));
    QStringList itemsText;
    QSet<QString> used;
    for (int i = 0; i < lines; ++i) {
        const QString sku = kSkus.at(int(m_random.below(kSkus.size())));
        if (used.contains(sku))
            continue;
        used.insert(sku);
        const qint64 qty = m_random.between(1, 3);
        draft.items.append({sku, qty});
        itemsText << QStringLiteral("%1x%2").arg(sku).arg(qty);
    }
    const int coupon = m_random.weighted({2, 1, 1});
    if (coupon == 1)
        draft.rewardCouponTemplate = QStringLiteral("WELCOME");
    else if (coupon == 2)
        draft.rewardCouponTemplate = QStringLiteral("VIP");
    draft.rewardPoints = m_random.below(6) * 10;
    auto created = m_world->setup->createOrder(draft);
    op.touched << draft.orderNo;
    if (created) {
        QMap<QString, qint64> bought;
        for (const auto &item : draft.items)
            bought[item.skuId] += item.qty;
        m_orders.append({draft.orderNo, draft.userId, draft.amountFen, bought});
    }
    return QStringLiteral("create %1 user %2 %3 fen [%4] coupon %5 points %6 -> %7")
        .arg(draft.orderNo)
        .arg(draft.userId)
        .arg(draft.amountFen)
        .arg(itemsText.join(QLatin1Char(' ')), draft.rewardCouponTemplate.value_or(QStringLiteral("-")))
        .arg(draft.rewardPoints)
        .arg(created ? QStringLiteral("created") : created.error().message);
}

QString SimDriver::opConfirm(Op &op)
{
    const QString orderNo = pickOrder(m_ledger->ordersIn(QStringLiteral("PENDING")));
    if (orderNo.isEmpty())
        return QStringLiteral("confirm: no order yet");
    op.touched << orderNo;
    const auto model = std::find_if(m_orders.cbegin(), m_orders.cend(),
                                    [&](const OrderModel &m) { return m.orderNo == orderNo; });
    const Channel channel = m_random.chance(50) ? Channel::WeChat : Channel::Alipay;
    static const QStringList answers{QStringLiteral("ok"), QStringLiteral("timeout"), QStringLiteral("timeout_created"),
                                     QStringLiteral("error"), QStringLiteral("slow")};
    const int answer = m_random.weighted({60, 8, 10, 7, 15});
    m_platform.scriptCreate(CreateAnswer(answer));
    const core::PaymentOutcome issued = m_world->tokens->issueToken(model->userId, orderNo);
    const QString token = QJsonDocument::fromJson(issued.body).object().value(QStringLiteral("token")).toString();
    core::ConfirmRequest request;
    request.userId = model->userId;
    request.idempotencyKey = QStringLiteral("sim-%1-%2").arg(op.number).arg(m_random.next() % 100000);
    request.token = token;
    request.orderNo = orderNo;
    request.channel = channel;
    const core::PaymentOutcome first = m_world->confirm->confirm(request);
    QString line = QStringLiteral("confirm %1 %2 gateway %3 -> %4 (%5)")
                       .arg(orderNo, channelText(channel), answers.at(answer), core::paymentOutcomeName(first.code),
                            layerName(first.layer));
    if (m_random.chance(25)) {
        // The client retries the same request (a timeout on its side): L1 answers it.
        const core::PaymentOutcome again = m_world->confirm->confirm(request);
        line += QStringLiteral("; retried -> %1 (%2%3)")
                    .arg(core::paymentOutcomeName(again.code), layerName(again.layer),
                         again.replayed ? QStringLiteral(", replayed") : QString());
        if (again.code != first.code && first.code != core::PaymentOutcomeCode::RequestInProgress && !m_opViolation)
            m_opViolation = Violation{
                QStringLiteral("idempotency-replay"),
                QStringLiteral("confirm of %1 answered %2, its retry with the same key %3")
                    .arg(orderNo, core::paymentOutcomeName(first.code), core::paymentOutcomeName(again.code))};
    } else if (m_random.chance(15)) {
        // A double click with a fresh key and the same token: L2 answers it.
        request.idempotencyKey += QStringLiteral("-click");
        const core::PaymentOutcome again = m_world->confirm->confirm(request);
        line += QStringLiteral("; double click -> %1 (%2)")
                    .arg(core::paymentOutcomeName(again.code), layerName(again.layer));
    }
    return line;
}

QString SimDriver::opUserPays(Op &op)
{
    const QString orderNo = pickOrder(m_ledger->ordersIn(QStringLiteral("PAYING")));
    if (orderNo.isEmpty())
        return QStringLiteral("pay: no order yet");
    op.touched << orderNo;
    auto raw = m_platform.userPays(orderNo);
    if (!raw)
        return QStringLiteral("pay %1: no open trade").arg(orderNo);
    const Sent sent{*raw, orderNo,
                    QJsonDocument::fromJson(raw->body).object().value(QStringLiteral("pay_no")).toString()};
    m_history.append(sent);
    if (m_random.chance(60))
        return QStringLiteral("pay %1 %2 %3; ").arg(orderNo, channelText(raw->channel), sent.payNo)
               + deliver(op, sent, QStringLiteral("notify"));
    m_queue.append(sent);
    return QStringLiteral("pay %1 %2 %3 (notification queued)").arg(orderNo, channelText(raw->channel), sent.payNo);
}

QString SimDriver::deliver(Op &op, const Sent &sent, const QString &label)
{
    ++m_deliveries;
    op.touched << sent.orderNo;
    core::RawDelivery raw = sent.raw;
    raw.receivedAtMs = m_clock.nowMs();
    m_probe.pipelineEvents.clear();
    // The crash between the log row and the paid transaction exists on the accepted-first
    // way only; otherwise either agent's setting receives it.
    const bool acceptedFirst = (m_probe.crashAt && *m_probe.crashAt == CallbackHookPoint::AfterLogRowDurable)
                               || m_random.chance(50);
    core::CallbackPipeline &pipeline = acceptedFirst ? *m_world->callbacksAcceptedFirst : *m_world->callbacks;
    // As an agent's HTTP route does for some of them: the event loop's try from memory
    // first; what it declines goes to the pipeline as before.
    std::optional<core::CallbackOutcome> fromMemory;
    if (!m_probe.crashAt && m_random.chance(40))
        fromMemory = answerFromMemory(raw);
    const core::CallbackOutcome out = fromMemory ? *fromMemory : pipeline.handle(raw);
    const QString line = QStringLiteral("%1 %2:%3 -> %4%5")
                             .arg(label, channelText(raw.channel), sent.payNo, outcomeText(out),
                                  fromMemory ? QStringLiteral(" (from memory)") : QString());
    if (m_opViolation)
        return line;
    // durable-success: the platform hears SUCCESS only for what a log row backs.
    if (out.success() && !m_probe.crashed) {
        auto rows = m_world->database->read([&](sql::Session &session) -> core::Result<qint64> {
            auto q = session.exec(
                QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE channel = ? AND pay_no = ?"),
                {channelText(raw.channel), sent.payNo});
            if (!q)
                return q.error();
            return q.value().next() ? q.value().value(0).toLongLong() : 0;
        });
        if (rows && rows.value() == 0)
            m_opViolation = Violation{QStringLiteral("durable-success"),
                                      QStringLiteral("%1:%2 was answered SUCCESS (%3) with no pay_callback_log row")
                                          .arg(channelText(raw.channel), sent.payNo, outcomeText(out))};
    }
    // lock-order: the pay lock goes only after COMMIT or rollback.
    bool open = false;
    for (const QString &e : std::as_const(m_probe.pipelineEvents)) {
        if (e == u"begin")
            open = true;
        else if (e == u"commit" || e == u"rollback")
            open = false;
        else if (e == u"unlock" && open && !m_opViolation)
            m_opViolation = Violation{
                QStringLiteral("lock-order"),
                QStringLiteral("%1:%2: the pay lock was released inside the open transaction (%3)")
                    .arg(channelText(raw.channel), sent.payNo, m_probe.pipelineEvents.join(QLatin1Char(' ')))};
    }
    // mode-applied: once accept_only is set, nothing is settled by a delivery.
    if (m_acceptOnly && out.note == u"processed" && !m_opViolation)
        m_opViolation = Violation{QStringLiteral("mode-applied"),
                                  QStringLiteral("%1:%2 was settled (processed) while callbacks are accept_only")
                                      .arg(channelText(raw.channel), sent.payNo)};
    return line;
}

std::optional<core::CallbackOutcome> SimDriver::answerFromMemory(const core::RawDelivery &raw)
{
    std::mutex mutex;
    std::condition_variable told;
    std::optional<core::CallbackOutcome> out;
    const bool taken = m_world->callbacksMemoryFirst->handleFromMemory(raw, [&](const core::CallbackOutcome &answer) {
        std::lock_guard guard(mutex); // notified under the mutex: the waiter cannot leave first
        out = answer;
        told.notify_one();
    });
    if (!taken)
        return std::nullopt;
    ++m_answeredFromMemory;
    std::unique_lock lock(mutex);
    told.wait(lock, [&] { return out.has_value(); });
    return out;
}

QString SimDriver::opDeliver(Op &op, bool crash)
{
    if (m_queue.isEmpty() && m_history.isEmpty())
        return QStringLiteral("deliver: nothing sent yet");
    QString label = QStringLiteral("deliver");
    Sent sent;
    if (!m_queue.isEmpty() && (m_history.isEmpty() || m_random.chance(65))) {
        // First delivery: usually the oldest waiting, sometimes one that overtook it.
        const int at = m_random.chance(70) ? 0 : int(m_random.below(m_queue.size()));
        sent = m_queue.takeAt(at);
        if (at > 0)
            label = QStringLiteral("deliver out-of-order");
    } else {
        sent = m_history.at(int(m_random.below(m_history.size())));
        label = QStringLiteral("redeliver");
    }
    if (m_random.chance(10)) {
        m_clock.advance(m_random.between(30000, 300000));
        label += QStringLiteral(" late");
    }
    if (m_random.chance(4)) {
        Sent forged = sent;
        const QJsonObject o = QJsonDocument::fromJson(sent.raw.body).object();
        forged.raw = m_platform.notification(sent.raw.channel, sent.payNo,
                                             o.value(QStringLiteral("out_trade_no")).toString(),
                                             o.value(QStringLiteral("amount")).toInteger(), false);
        return deliver(op, forged, label + QStringLiteral(" forged"));
    }
    if (crash) {
        static const QList<CallbackHookPoint> points{
            CallbackHookPoint::AfterContentChecks, CallbackHookPoint::AfterLogRowDurable,
            CallbackHookPoint::AfterLockBeforeBegin, CallbackHookPoint::AfterUnlock};
        static const QStringList names{QStringLiteral("after-content-checks"), QStringLiteral("after-log-row"),
                                       QStringLiteral("after-lock"), QStringLiteral("after-unlock")};
        const int at = int(m_random.below(points.size()));
        m_probe.crashAt = points.at(at);
        label = QStringLiteral("crash %1 while %2").arg(names.at(at), label);
        // The platform never heard an answer: it sends again later.
        m_queue.append(sent);
    }
    return deliver(op, sent, label);
}

QString SimDriver::opStrayPayment(Op &op, bool forClosed)
{
    QStringList candidates;
    if (forClosed) {
        candidates = m_ledger->ordersIn(QStringLiteral("CLOSED"));
    } else {
        candidates = m_ledger->ordersIn(QStringLiteral("PAID")) + m_ledger->ordersIn(QStringLiteral("REFUNDING"))
                     + m_ledger->ordersIn(QStringLiteral("PAYING"));
    }
    if (candidates.isEmpty())
        return forClosed ? QStringLiteral("pay closed: no CLOSED order") : QStringLiteral("pay twice: no paid order");
    candidates.sort();
    const QString orderNo = candidates.at(int(m_random.below(candidates.size())));
    op.touched << orderNo;
    const auto model = std::find_if(m_orders.cbegin(), m_orders.cend(),
                                    [&](const OrderModel &m) { return m.orderNo == orderNo; });
    const Channel channel = m_random.chance(50) ? Channel::WeChat : Channel::Alipay;
    const core::RawDelivery raw = m_platform.strayPayment(channel, orderNo, model->amountFen);
    const Sent sent{raw, orderNo,
                    QJsonDocument::fromJson(raw.body).object().value(QStringLiteral("pay_no")).toString()};
    m_history.append(sent);
    m_strays.append(sent);
    return deliver(op, sent,
                   forClosed ? QStringLiteral("pay closed order %1").arg(orderNo)
                             : QStringLiteral("pay twice %1").arg(orderNo));
}

QString SimDriver::opAmountChanged(Op &op)
{
    if (m_history.isEmpty())
        return QStringLiteral("amount changed: nothing sent yet");
    const Sent &base = m_history.at(int(m_random.below(m_history.size())));
    const QJsonObject o = QJsonDocument::fromJson(base.raw.body).object();
    Sent changed = base;
    changed.raw = m_platform.notification(base.raw.channel, base.payNo,
                                          o.value(QStringLiteral("out_trade_no")).toString(),
                                          o.value(QStringLiteral("amount")).toInteger() + m_random.between(1, 500));
    return deliver(op, changed, QStringLiteral("amount changed"));
}

QString SimDriver::opWorker(Op &op)
{
    op.broad = true;
    m_clock.advance(6000);
    const core::CallbackWorker::Report r = m_world->worker->runOnce();
    return QStringLiteral("worker: seen %1 finished %2 failed %3%4")
        .arg(r.seen)
        .arg(r.finished)
        .arg(r.failed)
        .arg(r.acceptOnly ? QStringLiteral(" (accept_only)") : QString());
}

QString SimDriver::opMode(Op &op)
{
    Q_UNUSED(op);
    const bool acceptOnly = !m_acceptOnly;
    const core::CallbackMode mode = acceptOnly ? core::CallbackMode::AcceptOnly : core::CallbackMode::Normal;
    const QString reason = acceptOnly ? QStringLiteral("sim: incident") : QStringLiteral("sim: incident over");
    // What PUT /api/v1/mode does: the setting and its audit row in one transaction, then
    // this agent's pipeline told at once.
    auto set = m_world->modes->setMode(mode, kLead, reason, m_clock.nowMs(), [&]() -> core::Result<void> {
        auto audited = m_world->audit->append({kLead,
                                               QStringLiteral("mode.set"),
                                               QStringLiteral("mode:callbacks"),
                                               {},
                                               core::callbackModeName(mode),
                                               reason,
                                               {}});
        if (!audited)
            return audited.error();
        return {};
    });
    if (!set)
        return QStringLiteral("mode %1 -> %2").arg(core::callbackModeName(mode), errorText(set.error()));
    m_world->callbacks->noteModeSet(mode);
    m_world->callbacksAcceptedFirst->noteModeSet(mode);
    m_acceptOnly = acceptOnly;
    return QStringLiteral("mode %1 -> set").arg(core::callbackModeName(mode));
}

QStringList SimDriver::tableCounts()
{
    static const QStringList tables{QStringLiteral("orders"),           QStringLiteral("skus"),
                                    QStringLiteral("stock_log"),        QStringLiteral("user_coupon"),
                                    QStringLiteral("point_log"),        QStringLiteral("outbox"),
                                    QStringLiteral("pay_callback_log"), QStringLiteral("callback_deliveries"),
                                    QStringLiteral("findings"),         QStringLiteral("audit_log"),
                                    QStringLiteral("payment_records")};
    QStringList counts;
    (void)m_world->database->read([&](sql::Session &session) -> core::Result<void> {
        for (const QString &t : tables) {
            // The sum of a changing column catches an UPDATE as well as an INSERT.
            const QString probe = t == u"orders" ? QStringLiteral("SUM(version)")
                                  : t == u"skus" ? QStringLiteral("SUM(stock)")
                                  : t == u"pay_callback_log"
                                      ? QStringLiteral("SUM(CASE WHEN status = 'processed' THEN 1 ELSE 0 END)")
                                      : QStringLiteral("0");
            auto q = session.exec(QStringLiteral("SELECT COUNT(*), %1 FROM %2").arg(probe, t));
            if (!q)
                return q.error();
            q.value().next();
            counts << QStringLiteral("%1=%2/%3").arg(t, q.value().value(0).toString(), q.value().value(1).toString());
        }
        return {};
    });
    return counts;
}

QString SimDriver::opReplay(Op &op)
{
    if (m_history.isEmpty())
        return QStringLiteral("replay: nothing sent yet");
    const Sent &sent = m_history.at(int(m_random.below(m_history.size())));
    op.touched << sent.orderNo;
    const QStringList before = tableCounts();
    auto dry = m_world->callbacks->replay(sent.raw.channel, sent.payNo, true);
    const QStringList after = tableCounts();
    if (before != after && !m_opViolation)
        m_opViolation = Violation{QStringLiteral("dry-run-writes"),
                                  QStringLiteral("the dry run of %1:%2 changed rows: %3 -> %4")
                                      .arg(channelText(sent.raw.channel), sent.payNo, before.join(QLatin1Char(' ')),
                                           after.join(QLatin1Char(' ')))};
    QString line = QStringLiteral("replay %1:%2 dry -> %3")
                       .arg(channelText(sent.raw.channel), sent.payNo,
                            dry ? outcomeText(dry.value().outcome) : errorText(dry.error()));
    if (!dry || !m_random.chance(50))
        return line;
    auto real = m_world->callbacks->replay(sent.raw.channel, sent.payNo, false);
    if (!real)
        return line + QStringLiteral("; real -> %1").arg(errorText(real.error()));
    // What POST .../replay does after the pipeline: the audit row.
    (void)m_world->audit->append({kDesk,
                                  QStringLiteral("callback.replay"),
                                  QStringLiteral("callback:%1:%2").arg(channelText(sent.raw.channel), sent.payNo),
                                  {},
                                  core::callbackOutcomeName(real.value().outcome.code),
                                  QStringLiteral("sim: replay"),
                                  {}});
    const core::CallbackOutcome &predicted = dry.value().outcome;
    const core::CallbackOutcome &done = real.value().outcome;
    if ((predicted.code != done.code || predicted.note != done.note) && !m_opViolation)
        m_opViolation = Violation{
            QStringLiteral("dry-run-prediction"),
            QStringLiteral("the dry run of %1:%2 predicted %3, the replay did %4")
                .arg(channelText(sent.raw.channel), sent.payNo, outcomeText(predicted), outcomeText(done))};
    return line + QStringLiteral("; real -> %1").arg(outcomeText(done));
}

QString SimDriver::submitRefund(const QString &refundNo, Channel channel)
{
    if (channel == Channel::WeChat)
        m_platform.scriptRefund(RefundAnswer(m_random.weighted({45, 15, 10, 15, 15})));
    else
        m_platform.scriptRefund(m_random.chance(70) ? RefundAnswer::Success : RefundAnswer::Timeout);
    auto submitted = m_world->refunds->submit(refundNo);
    if (!submitted)
        return QStringLiteral("submit %1 -> %2").arg(refundNo, errorText(submitted.error()));
    return QStringLiteral("submit %1 -> %2").arg(refundNo, core::refundStatusName(submitted.value().status));
}

QString SimDriver::decide(Op &op, qint64 id, const QString &kind)
{
    const qint64 now = m_clock.nowMs();
    QString line;
    auto approved = [&](const core::Result<core::DecisionOutcome> &r) {
        if (!r)
            return errorText(r.error());
        return QStringLiteral("%1%2").arg(r.value().compensation.status,
                                          r.value().decidedNow ? QString() : QStringLiteral(" (already)"));
    };
    std::optional<core::Result<core::DecisionOutcome>> last;
    switch (m_random.weighted({50, 10, 15, 10, 15})) {
    case 0:
        last = m_world->compensations->approve(id, kDesk2, QStringLiteral("sim: approve"), now);
        line = QStringLiteral("approve by bob -> %1").arg(approved(*last));
        break;
    case 1: {
        auto first = m_world->compensations->approve(id, kDesk2, QStringLiteral("sim: approve"), now);
        last = m_world->compensations->approve(id, kLead, QStringLiteral("sim: approve again"), now);
        line = QStringLiteral("approve by bob -> %1, again by carol -> %2").arg(approved(first), approved(*last));
        break;
    }
    case 2: {
        // Two approvers at the same instant; the answers are listed sorted, so the trace
        // does not depend on which thread won.
        std::optional<core::Result<core::DecisionOutcome>> a, b;
        std::thread other([&] { b = m_world->compensations->approve(id, kLead, QStringLiteral("sim: approve"), now); });
        a = m_world->compensations->approve(id, kDesk2, QStringLiteral("sim: approve"), now);
        other.join();
        QStringList answers{approved(*a), approved(*b)};
        answers.sort();
        line = QStringLiteral("approve concurrently -> %1").arg(answers.join(QStringLiteral(" | ")));
        last = (a->ok() && a->value().decidedNow) ? a : b;
        break;
    }
    case 3:
        last = m_world->compensations->approve(id, kDesk, QStringLiteral("sim: my own"), now);
        line = QStringLiteral("approve by its proposer -> %1").arg(approved(*last));
        break;
    default:
        last = m_world->compensations->reject(id, kLead, QStringLiteral("sim: not needed"), now);
        line = QStringLiteral("reject by carol -> %1").arg(approved(*last));
        break;
    }
    if (kind == u"refund" && last && last->ok() && last->value().compensation.status == u"executed") {
        const QJsonObject result = last->value().compensation.result;
        const QString refundNo = result.value(QStringLiteral("refund_no")).toString();
        const auto channel = core::channelFromName(result.value(QStringLiteral("channel")).toString());
        // The approval and the submission are two steps: the ledger is checked between
        // them, when the refund is recorded and the platform has not yet refused anything.
        if (!m_opViolation) {
            if (auto v = m_ledger->check(*m_world->database, {last->value().compensation.orderNo}))
                m_opViolation = v;
        }
        if (!refundNo.isEmpty() && channel && !m_opViolation)
            line += QStringLiteral("; ") + submitRefund(refundNo, *channel);
    }
    Q_UNUSED(op);
    return line;
}

QString SimDriver::opRefundOwn(Op &op)
{
    const QString orderNo = pickOrder(m_ledger->ordersIn(QStringLiteral("PAID")));
    if (orderNo.isEmpty())
        return QStringLiteral("refund: no order yet");
    op.touched << orderNo;
    core::CompensationProposal p;
    p.kind = CompensationKind::Refund;
    p.orderNo = orderNo;
    p.proposedBy = kDesk;
    p.reason = QStringLiteral("sim: customer asked");
    p.dedupKey = QStringLiteral("sim:refund:%1").arg(op.number);
    auto proposed = m_world->compensations->propose(p, m_clock.nowMs());
    if (!proposed)
        return QStringLiteral("refund %1: propose -> %2").arg(orderNo, errorText(proposed.error()));
    return QStringLiteral("refund %1: compensation %2 proposed; ").arg(orderNo).arg(proposed.value().compensation.id)
           + decide(op, proposed.value().compensation.id, QStringLiteral("refund"));
}

QString SimDriver::opRefundPartial(Op &op)
{
    const QString orderNo = pickOrder(m_ledger->ordersIn(QStringLiteral("PAID")));
    if (orderNo.isEmpty())
        return QStringLiteral("partial refund: no order yet");
    const OrderModel *order = nullptr;
    for (const OrderModel &o : std::as_const(m_orders)) {
        if (o.orderNo == orderNo)
            order = &o;
    }
    if (!order || order->amountFen < 2)
        return QStringLiteral("partial refund %1: nothing to split").arg(orderNo);
    op.touched << orderNo;
    core::CompensationProposal p;
    p.kind = CompensationKind::Refund;
    p.orderNo = orderNo;
    p.proposedBy = kDesk;
    p.reason = QStringLiteral("sim: part of the order back");
    p.dedupKey = QStringLiteral("sim:refund:%1").arg(op.number);
    // Mostly a third or so of the price, now and then more than can be left (refused).
    p.amountFen = m_random.chance(85) ? m_random.between(1, std::max<qint64>(1, order->amountFen / 3))
                                      : m_random.between(order->amountFen / 2, order->amountFen);
    QString itemsText = QStringLiteral("no items");
    if (m_random.chance(60) && !order->items.isEmpty()) {
        const QStringList skus = order->items.keys();
        const QString sku = skus.at(int(m_random.below(skus.size())));
        // Now and then one more than was bought (refused).
        const qint64 qty = m_random.between(1, order->items.value(sku) + (m_random.chance(10) ? 1 : 0));
        p.refundItems.insert(sku, qty);
        itemsText = QStringLiteral("%1x%2").arg(sku).arg(qty);
    }
    auto proposed = m_world->compensations->propose(p, m_clock.nowMs());
    if (!proposed)
        return QStringLiteral("partial refund %1 %2 fen %3: propose -> %4")
            .arg(orderNo)
            .arg(*p.amountFen)
            .arg(itemsText, errorText(proposed.error()));
    return QStringLiteral("partial refund %1 %2 fen %3: compensation %4 proposed; ")
               .arg(orderNo)
               .arg(*p.amountFen)
               .arg(itemsText)
               .arg(proposed.value().compensation.id)
           + decide(op, proposed.value().compensation.id, QStringLiteral("refund"));
}

QString SimDriver::opRefundStray(Op &op)
{
    if (m_strays.isEmpty())
        return QStringLiteral("refund stray: none");
    const Sent &stray = m_strays.at(int(m_random.below(m_strays.size())));
    op.touched << stray.orderNo;
    const qint64 paid = QJsonDocument::fromJson(stray.raw.body).object().value(QStringLiteral("amount")).toInteger();
    core::CompensationProposal p;
    p.kind = CompensationKind::Refund;
    p.orderNo = stray.orderNo;
    p.payNo = stray.payNo;
    p.proposedBy = kDesk;
    p.reason = QStringLiteral("sim: paid twice");
    p.dedupKey = QStringLiteral("sim:refund:%1").arg(op.number);
    QString amount = QStringLiteral("whole");
    switch (m_random.weighted({40, 30, 30})) {
    case 1:
        if (paid > 1) {
            p.amountFen = m_random.between(1, paid - 1);
            amount = QStringLiteral("%1 fen").arg(*p.amountFen);
        }
        break;
    case 2:
        p.amountFen = paid + m_random.between(1, 300);
        amount = QStringLiteral("%1 fen (over)").arg(*p.amountFen);
        break;
    default: break;
    }
    auto proposed = m_world->compensations->propose(p, m_clock.nowMs());
    if (!proposed)
        return QStringLiteral("refund stray %1: propose -> %2").arg(stray.payNo, errorText(proposed.error()));
    return QStringLiteral("refund stray %1 %2: compensation %3 proposed; ")
               .arg(stray.payNo, amount)
               .arg(proposed.value().compensation.id)
           + decide(op, proposed.value().compensation.id, QStringLiteral("refund"));
}

QString SimDriver::settleRefund(const core::RefundNotification &n)
{
    auto settled = m_world->refunds->settle(n);
    if (!settled)
        return errorText(settled.error());
    switch (settled.value()) {
    case core::RefundSettlement::Settled: return QStringLiteral("settled");
    case core::RefundSettlement::AlreadySettled: return QStringLiteral("already settled");
    case core::RefundSettlement::Unknown: return QStringLiteral("unknown refund");
    case core::RefundSettlement::Abnormal: return QStringLiteral("abnormal, kept open");
    }
    return {};
}

QString SimDriver::opRefundFinish(Op &op)
{
    op.broad = true;
    QStringList open;
    for (const QString &no : m_platform.refundNos()) {
        const PlatformRefund *r = m_platform.findRefund(no);
        if (r->state == core::GatewayRefundState::Processing || r->state == core::GatewayRefundState::Abnormal)
            open << no;
    }
    if (open.isEmpty())
        return QStringLiteral("refund finish: none open");
    const QString refundNo = open.at(int(m_random.below(open.size())));
    const PlatformRefund *r = m_platform.findRefund(refundNo);
    const bool fromAbnormal = r->state == core::GatewayRefundState::Abnormal;
    core::GatewayRefundState to = core::GatewayRefundState::Success;
    const int pick = m_random.weighted({50, 20, fromAbnormal ? 0 : 30});
    if (pick == 1)
        to = core::GatewayRefundState::Closed;
    else if (pick == 2)
        to = core::GatewayRefundState::Abnormal;
    auto n = m_platform.finishRefund(refundNo, to);
    if (!n)
        return QStringLiteral("refund finish %1: stays").arg(refundNo);
    return QStringLiteral("refund %1 %2%3 at the platform; notify -> %4")
        .arg(refundNo, n->refundStatus, fromAbnormal ? QStringLiteral(" (after ABNORMAL)") : QString(),
             settleRefund(*n));
}

QString SimDriver::opRefundResend(Op &op)
{
    op.broad = true;
    if (m_platform.refundNos().isEmpty())
        return QStringLiteral("refund resend: none");
    const QString refundNo = m_platform.refundNos().at(int(m_random.below(m_platform.refundNos().size())));
    auto n = m_platform.refundNotification(refundNo);
    if (!n)
        return QStringLiteral("refund resend %1: nothing to send").arg(refundNo);
    return QStringLiteral("refund resend %1 %2 -> %3").arg(refundNo, n->refundStatus, settleRefund(*n));
}

QString SimDriver::opRefundFollowUp(Op &op)
{
    op.broad = true;
    m_clock.advance(10000);
    m_platform.scriptQueryFails(m_random.chance(10));
    auto report = m_world->refunds->followUp(m_clock.nowMs() - 5000);
    m_platform.scriptQueryFails(false);
    if (!report)
        return QStringLiteral("refund follow-up -> %1").arg(errorText(report.error()));
    return QStringLiteral("refund follow-up: submitted %1 settled %2 waiting %3 failed %4")
        .arg(report.value().submitted)
        .arg(report.value().settled)
        .arg(report.value().waiting)
        .arg(report.value().failed);
}

QString SimDriver::opClose(Op &op)
{
    op.broad = true;
    m_clock.advance(m_random.between(30000, 120000));
    m_platform.scriptQueryFails(m_random.chance(10));
    auto report = m_world->closer->runOnce(m_clock.nowMs());
    m_platform.scriptQueryFails(false);
    if (!report)
        return QStringLiteral("close run -> %1").arg(errorText(report.error()));
    return QStringLiteral("close run: closed %1 settled %2 left %3 moved on %4%5")
        .arg(report.value().closed)
        .arg(report.value().settled)
        .arg(report.value().left)
        .arg(report.value().movedOn)
        .arg(report.value().acceptOnly ? QStringLiteral(" (accept_only)") : QString());
}

QString SimDriver::opPatrol(Op &op)
{
    op.broad = true;
    m_platform.scriptQueryFails(m_random.chance(10));
    auto run = m_world->patrol->runOnce(m_clock.nowMs());
    m_platform.scriptQueryFails(false);
    if (!run)
        return QStringLiteral("patrol -> %1").arg(errorText(run.error()));
    QStringList kinds;
    for (const core::StoredFinding &f : run.value())
        kinds << f.kind;
    kinds.sort();
    return QStringLiteral("patrol: %1 finding(s) [%2]").arg(run.value().size()).arg(kinds.join(QLatin1Char(' ')));
}

QString SimDriver::opCompensation(Op &op)
{
    const QString orderNo = pickOrder({});
    if (orderNo.isEmpty())
        return QStringLiteral("compensation: no order yet");
    op.touched << orderNo;
    static const QList<CompensationKind> kinds{CompensationKind::FreezeCoupon, CompensationKind::ReversePoints,
                                               CompensationKind::RestoreStock};
    const CompensationKind kind = kinds.at(int(m_random.below(kinds.size())));
    core::CompensationProposal p;
    p.kind = kind;
    p.orderNo = orderNo;
    p.proposedBy = kDesk;
    p.reason = QStringLiteral("sim: looks wrong");
    p.dedupKey = QStringLiteral("sim:%1:%2").arg(core::compensationKindName(kind)).arg(op.number);
    auto proposed = m_world->compensations->propose(p, m_clock.nowMs());
    if (!proposed)
        return QStringLiteral("%1 %2: propose -> %3")
            .arg(core::compensationKindName(kind), orderNo, errorText(proposed.error()));
    return QStringLiteral("%1 %2 (%3): compensation %4 proposed; ")
               .arg(core::compensationKindName(kind), orderNo, m_ledger->statusOf(orderNo))
               .arg(proposed.value().compensation.id)
           + decide(op, proposed.value().compensation.id, core::compensationKindName(kind));
}

QString SimDriver::opApproveProposals(Op &op)
{
    op.broad = true;
    auto listed = m_world->compensations->list(QStringLiteral("proposed"), 20);
    if (!listed)
        return QStringLiteral("approve proposals -> %1").arg(errorText(listed.error()));
    QList<core::Compensation> rows = listed.value();
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.id < b.id; });
    for (const core::Compensation &c : std::as_const(rows)) {
        if (c.proposedBy != u"system:patrol")
            continue;
        return QStringLiteral("patrol's %1 %2 (compensation %3); ")
                   .arg(core::compensationKindName(c.kind), c.orderNo)
                   .arg(c.id)
               + decide(op, c.id, core::compensationKindName(c.kind));
    }
    return QStringLiteral("approve proposals: none from the patrol");
}

QString SimDriver::opOutbox(Op &op)
{
    Q_UNUSED(op);
    m_handler->failPercent = m_random.chance(50) ? 0 : 60;
    m_clock.advance(m_random.between(500, 5000));
    auto stats = m_world->dispatcher->runOnce();
    m_handler->failPercent = 0;
    if (!stats)
        return QStringLiteral("outbox -> %1").arg(errorText(stats.error()));
    return QStringLiteral("outbox: claimed %1 delivered %2 retried %3 dead %4")
        .arg(stats.value().claimed)
        .arg(stats.value().delivered)
        .arg(stats.value().retried)
        .arg(stats.value().dead);
}

QString SimDriver::opRedrive(Op &op)
{
    Q_UNUSED(op);
    auto dead = m_world->outboxStore->list(core::OutboxStatus::Dead, 50);
    if (!dead)
        return QStringLiteral("redrive -> %1").arg(errorText(dead.error()));
    if (dead.value().isEmpty())
        return QStringLiteral("redrive: no dead event");
    QList<core::OutboxEvent> rows = dead.value();
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.id < b.id; });
    const core::OutboxEvent &event = rows.first();
    auto redriven = m_world->outboxStore->redrive(event.id, m_clock.nowMs(), [&](const auto &, const auto &) {
        return m_world->audit
                       ->append({kLead,
                                 QStringLiteral("outbox.redrive"),
                                 QStringLiteral("outbox:%1").arg(event.id),
                                 QStringLiteral("dead"),
                                 QStringLiteral("pending"),
                                 QStringLiteral("sim: receiver back"),
                                 {}})
                       .ok()
                   ? core::Result<void>()
                   : core::Result<void>(core::Error::make(core::ErrorCode::Unavailable, QStringLiteral("audit")));
    });
    return QStringLiteral("redrive %1 -> %2")
        .arg(event.eventId, redriven ? QStringLiteral("pending") : errorText(redriven.error()));
}

QString SimDriver::opCrash(Op &op)
{
    op.broad = true;
    ++m_crashes;
    QString line = QStringLiteral("crash between operations");
    if (!m_queue.isEmpty() || !m_history.isEmpty()) {
        if (m_random.chance(70))
            line = opDeliver(op, true);
    }
    m_probe.crashAt.reset();
    m_probe.crashed = false;
    if (auto rebuilt = rebuild(); !rebuilt)
        return line + QStringLiteral("; restart -> %1").arg(rebuilt.error().internalMessage);
    // The restarted agent's callbacks mode comes from the database like everything else.
    return line + QStringLiteral("; restarted");
}

QString SimDriver::opClock(Op &op)
{
    Q_UNUSED(op);
    const qint64 ms = m_random.between(60000, 600000);
    m_clock.advance(ms);
    return QStringLiteral("clock +%1 s").arg(ms / 1000);
}

std::optional<Violation> SimDriver::quiesce()
{
    // The incident is over, the platform re-sends until it hears SUCCESS, and every
    // background loop runs until nothing is left to do.
    if (m_acceptOnly) {
        Op op;
        (void)opMode(op);
    }
    auto line = [&](const QString &text) {
        const QString traced = QStringLiteral("  end %1").arg(text);
        m_lastOps.append(traced);
        if (m_lastOps.size() > 30)
            m_lastOps.removeFirst();
        if (m_options.traceLine)
            m_options.traceLine(traced);
    };
    for (int round = 0; round < 4; ++round) {
        Op op;
        while (!m_queue.isEmpty()) {
            const Sent sent = m_queue.takeFirst();
            line(deliver(op, sent, QStringLiteral("deliver")));
        }
        m_clock.advance(120000);
        line(opWorker(op));
        m_handler->failPercent = 0;
        for (int i = 0; i < 20; ++i) {
            auto stats = m_world->dispatcher->runOnce();
            if (!stats || stats.value().claimed == 0)
                break;
        }
        auto followUp = m_world->refunds->followUp(m_clock.nowMs());
        line(QStringLiteral("refund follow-up %1").arg(followUp ? QStringLiteral("ran") : errorText(followUp.error())));
        auto patrol = m_world->patrol->runOnce(m_clock.nowMs());
        line(QStringLiteral("patrol %1")
                 .arg(patrol ? QString::number(patrol.value().size()) : errorText(patrol.error())));
        auto closed = m_world->closer->runOnce(m_clock.nowMs());
        line(QStringLiteral("close %1")
                 .arg(closed ? QString::number(closed.value().closed) : errorText(closed.error())));
        if (m_opViolation)
            return m_opViolation;
    }
    if (auto v = checkAll({}))
        return v;
    if (auto v = m_ledger->checkNothingAccepted(*m_world->database))
        return v;
    return m_ledger->checkPatrolQuiet(*m_world->database);
}

} // namespace payonce::simulation
