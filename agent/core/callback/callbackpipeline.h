#pragma once

#include "core/callback/deliverygroupcommit.h"
#include "core/callback/paymentnotification.h"
#include "core/common/channel.h"
#include "core/common/logthrottle.h"
#include "core/ports/callbackmodestore.h"
#include "core/ports/callbackstore.h"
#include "core/ports/eventsink.h"
#include "core/ports/paymentgateway.h"
#include "shared/layer.h"

#include <QString>
#include <QStringList>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>

namespace payonce::core {

class CallbackHistory;
class Clock;
class DistributedLock;
struct GatewayTrade;
class LockHandle;
class NotificationVerifier;
class SeenProcessedSet;
struct SeenEntry;

/// How a callback delivery ended, protocol-agnostic; the HTTP layer maps it (docs/openapi.yaml,
/// "Callbacks"): Success 200 SUCCESS (also every duplicate), BadSignature 401 FAIL,
/// InvalidNotification and ContentMismatch 400 FAIL, UnknownOrder 400 FAIL, Unavailable
/// 500 FAIL (retryable: nothing durable was made), Internal 500 FAIL.
enum class CallbackOutcomeCode {
    Success,
    BadSignature,
    InvalidNotification,
    ContentMismatch,
    UnknownOrder,
    Unavailable,
    Internal
};

/// "success", "bad_signature", "invalid_notification", "content_mismatch",
/// "unknown_order", "service_unavailable", "internal_error".
QString callbackOutcomeName(CallbackOutcomeCode code);

/// One answer of the callback path. `layer` is X-Payonce-Layer; `note` says which rule
/// decided, for logs, metrics and tests: "processed", "seen_processed", "log_row_exists",
/// "accept_only", "lock_busy_durable", "lock_busy", "already_paid", "double_payment",
/// "stale_fence", "side_effect_exists", "aborted_by_hook", "amount_mismatch", ...
struct CallbackOutcome {
    CallbackOutcomeCode code = CallbackOutcomeCode::Internal;
    Layer layer = Layer::None;
    QString note;
    QString message;
    QString payNo;
    QString orderNo;
    bool durable = false; ///< a pay_callback_log row or a committed state backs this answer

    bool success() const { return code == CallbackOutcomeCode::Success; }
};

/// QA switches (docs/design.md "The simulated platform"; docs/openapi.yaml disable_layers). Settable only
/// when CallbackPipelineOptions::qaEnabled.
struct CallbackLayerSwitches {
    bool disableLock = false;         ///< "lock": no L3 lock, no fencing token
    bool disableUniqueIndex = false;  ///< "unique_index": no callback-log row, no seen-processed fast path
    bool disableStateMachine = false; ///< "state_machine": read-then-write instead of the CAS
    bool disableSideEffect = false;   ///< "side_effect": a nonce in every effect's key
    bool unlockBeforeCommit = false;  ///< test only: the classic ghost ordering (unlock, then COMMIT)

    /// From docs/openapi.yaml's disable_layers names; unknown names are refused (InvalidInput).
    static Result<CallbackLayerSwitches> fromNames(const QStringList &disableLayers);
    /// Every layer disabled in either.
    CallbackLayerSwitches with(const CallbackLayerSwitches &other) const;
};

/// Named points where a test hook may pause the pipeline or stop it (as if the process
/// died there: Abort returns at once, leaving what is durable as it is).
enum class CallbackHookPoint {
    AfterContentChecks,
    AfterLogRowDurable,
    AfterLockBeforeBegin,
    BetweenUnlockAndCommit,
    AfterUnlock
};
enum class CallbackHookAction {
    Continue,
    Abort
};
struct CallbackHookContext {
    QString payNo;
    QString orderNo;
    LockHandle *lock = nullptr; ///< the held lease at AfterLockBeforeBegin, else null
};

struct CallbackPipelineOptions {
    std::chrono::milliseconds lockTtl{std::chrono::seconds(10)};
    /// How long a delivery waits for a contended pay lock before giving up (0: try once).
    std::chrono::milliseconds lockWait{0};
    /// Ours (content checks); an empty id is not checked.
    QString weChatMchId;
    QString weChatAppId;
    QString alipaySellerId;
    QString alipayAppId;
    QString currency = QStringLiteral("CNY");
    /// config qa.enabled: only then setSwitches() is accepted and scenarioSwitches asked.
    bool qaEnabled = false;
    /// QA scenarios' disable_layers for their own orders (core::ScenarioSwitches), asked
    /// with the order_no once the order is known; added to the pipeline's own switches.
    std::function<std::optional<CallbackLayerSwitches>(const QString &orderNo)> scenarioSwitches;
    /// How long a read of the shared mode is reused (0: read it for every delivery).
    qint64 modeCacheMs = 1000;
    QString agentId;
    /// The HTTP status recorded in callback_deliveries (the routes pass errormapping's);
    /// unset: 0 is recorded.
    std::function<int(CallbackOutcomeCode)> httpStatusOf;
    /// Receives "lock", "begin", "commit", "rollback", "unlock" in the order they happen.
    std::function<void(const QString &)> onEvent;
    /// Test only: called at each CallbackHookPoint.
    std::function<CallbackHookAction(CallbackHookPoint, const CallbackHookContext &)> testHook;
    /// The reads replay() needs (newest stored delivery, log row status); without it
    /// replay() answers Misconfigured.
    CallbackHistory *history = nullptr;
    /// A delivery whose pay lock is free commits its delivery row, its log row and the paid
    /// transaction as one (docs/design.md, "Callback path: one commit"); false: the log row
    /// is always made durable in a transaction of its own first (config callbacks.commit
    /// accepted_first).
    bool oneCommit = true;
    /// After the fact is durable: finding.raised for a new finding (amount_mismatch,
    /// double_payment, oversold) and fence.stale_refused, actor "system:<agentId>".
    EventSink events;
};

/// Work that runs inside the settling transaction, just before COMMIT, with the outcome that
/// commit makes (the operator's or the patrol's audit row: an AuditWriter on the same thread
/// joins the transaction). An error rolls everything back; the call then answers
/// unavailable. It runs only when the transaction commits a decision (PAID by this call,
/// or a lost CAS recorded): a path that writes nothing never calls it.
using SettledInTransaction = std::function<Result<void>(const CallbackOutcome &)>;

/// What an operator's replay of a stored delivery did or, dry, would do.
struct CallbackReplay {
    qint64 deliveryId = 0;   ///< the stored delivery replayed
    CallbackOutcome outcome; ///< the answer (the dry run's prediction of it)
    QStringList changes;     ///< dry run only: the rows the replay would write
};

/// The callback path (docs/design.md, "Callback path"), in this order and no other:
///
///   verify (signature, time window, decrypt) → content checks against the order (paid
///   state, merchant/app ids, currency, amount: a mismatch is a 400 and a finding) → the
///   seen-processed fast path (key store; layer unique_index) → for a new notification
///   whose pay lock is free, one commit (options.oneCommit; settleInOneCommit): lock,
///   CAS, the delivery row with its decision, the log row `processed`, the effects, the
///   stock last → COMMIT; otherwise, having written nothing, the accepted-first way: the
///   delivery appended to callback_deliveries (unverified ones too, without a body) →
///   pay_callback_log row
///   `accepted` in its own short transaction (L4; a duplicate row in any status answers
///   SUCCESS at once: it is durable) → [accept-only mode: SUCCESS here] → lock
///   `lock:pay:{pay_no}` with a fencing token for the order (L3) → ONE transaction: fenced
///   CAS PENDING|PAYING → PAID (L5) → per item conditional stock UPDATE + stock_log
///   (order_no, sku_id) → user_coupon (order_no, template_id) → point_log (order_no,
///   point_type) → outbox `order.paid` (event_id "order.paid:<order_no>") → log row
///   `processed` → COMMIT → unlock → seen-processed marked → SUCCESS.
///
/// Lock contention (docs/design.md rule 8, docs/openapi.yaml): before a durable row exists (unique_index
/// disabled) it answers Unavailable (500 FAIL, the platform retries); once this delivery's
/// accepted row is durable it answers SUCCESS (layer lock): the holder, or else the
/// worker, finishes that row. A stale fencing token (a holder paused past its lease) is
/// refused by the database; the same rule decides the answer. A CAS that loses finds the
/// order PAID by this pay_no (SUCCESS, state_machine) or by another / CLOSED (a
/// double_payment finding, acknowledged). Stock short: PAID, no stock_log, an oversold
/// finding. The lock is released only after COMMIT or rollback (unless the test-only
/// unlockBeforeCommit reproduces the ghost). With the key store unreachable the lock and
/// fast path are skipped and L4/L5/side-effect keys decide (docs/design.md rule 5).
///
/// Thread-safe: run handle() on worker threads, never the event loop (handleFromMemory()
/// may run there). Ports outlive it.
class CallbackPipeline {
public:
    CallbackPipeline(const NotificationVerifier &verifier, CallbackStore &store, CallbackModeStore &modes,
                     DistributedLock &locks, SeenProcessedSet *seen, const Clock &clock,
                     CallbackPipelineOptions options = {});

    /// How a delivery's answer is handed back when it is ready.
    using Answer = std::function<void(const CallbackOutcome &)>;
    /// A delivery as received (the route): verified with the time window. `answer` is
    /// called exactly once: on this thread before handle() returns, or — when the answer
    /// only waits for its delivery row (a rejection, a copy the seen set answers), which
    /// rides the group commit — on the group commit's writer thread once that row has
    /// committed. Either way nothing is answered before what backs it is durable.
    void handle(const RawDelivery &delivery, Answer answer);
    /// The same, waiting for the answer.
    CallbackOutcome handle(const RawDelivery &delivery);
    /// handle() from memory alone, for a copy that needs nothing else: its bytes verified
    /// before (NotificationVerifier::verifyFromMemory; its time window is checked) and its
    /// pay_no seen `processed` in this process's memory (SeenProcessedSet::seenInMemory),
    /// naming what the processed one did — the seen set's answer. Answered exactly as
    /// handle() would answer it (its delivery row through the group commit, `answer` on the
    /// writer's thread once that has committed), and true returned. Anything else returns
    /// false having done nothing, for handle() to judge: bytes or pay_no not in memory, a
    /// test hook (it may pause), QA scenario switches (read from the database), the unique
    /// index switched off. Never waits on storage or the key store, so the HTTP event loop
    /// may call it and spare the copy the hand-off to a worker thread.
    bool handleFromMemory(const RawDelivery &delivery, const Answer &answer);
    /// Finishes an `accepted` row (the worker, the operator's replay): its stored raw
    /// delivery is verified again without the time window and goes through the same
    /// transaction code. Nothing is appended to callback_deliveries.
    CallbackOutcome finishAccepted(const AcceptedCallback &row);
    /// Settles a payment that the platform's own query confirmed (the patrol, for an order
    /// stuck in PAYING): there is no delivery to verify or record, so `confirmed` must come
    /// from a verified gateway response. The content checks (amount, currency; merchant and
    /// app ids are the gateway client's own) and then the same L4 row, L3 lock and
    /// transaction as a delivery: a callback for the same pay_no arriving at the same
    /// moment meets it at the log row, the lock or the CAS, and the order is paid once. An
    /// existing log row does not end it here (it may be an `accepted` row nobody can
    /// finish); the CAS and the side-effect keys decide.
    CallbackOutcome settleConfirmed(const PaymentNotification &confirmed, const SettledInTransaction &audit = {});
    /// The operator's replay (docs/openapi.yaml, POST /api/v1/callbacks/{channel}/{pay_no}/replay):
    /// the newest verified stored delivery for (channel, pay_no) runs through the path
    /// again — signature re-verified, the time window not (checked on receipt), content
    /// checks, seen-processed fast path, L4, L3, L5, side-effect keys — with two
    /// differences from a platform delivery: nothing is appended to callback_deliveries
    /// (the replay is recorded in the audit log instead, by the route), and an `accepted`
    /// log row does not end it at L4: the replay finishes that row as the worker would,
    /// also in accept_only mode (the mode sheds the platform's traffic; a replay is one
    /// deliberate operator action). NotFound when no verified delivery is stored.
    ///
    /// dryRun: the same reads (stored delivery, verification, order, seen-processed, log
    /// row status, order status and pay_no) and no write at all — no finding, no log row,
    /// no lock, no transaction; the outcome is what the real replay would answer if
    /// nothing changes in between and the pay lock is free, and `changes` names the rows
    /// it would write. QA layer switches are not modelled by the dry run.
    /// `audit` (not for a dry run) runs in the transaction that settles the order, if the
    /// replay gets that far; otherwise the replay committed nothing of its own and the caller
    /// audits it on its own.
    Result<CallbackReplay> replay(Channel channel, const QString &payNo, bool dryRun,
                                  const SettledInTransaction &audit = {});

    /// This agent has just set the shared mode (PUT /api/v1/mode): it applies from the next
    /// delivery on, instead of when the cached read expires. Other agents read the new
    /// mode within options.modeCacheMs of their previous read. Thread-safe.
    void noteModeSet(CallbackMode mode);

    /// QA switches; Forbidden unless options.qaEnabled. Thread-safe, effective for the
    /// next delivery.
    Result<void> setSwitches(const CallbackLayerSwitches &switches);
    CallbackLayerSwitches switches() const;

    /// Counters (atomic reads): decisions by layer, stale-token writes refused.
    qint64 decidedBy(Layer layer) const { return m_byLayer[std::size_t(layer)].load(); }
    qint64 staleFenceRefused() const { return m_staleFence.load(); }
    /// Orders this pipeline paid without the pay lock or a fencing token because the key
    /// store could not be reached (docs/design.md rule 5): the status CAS decided alone.
    qint64 unfencedSettlements() const { return m_unfenced.load(); }
    /// Delivery rows decided before they were written (seen duplicates, rejections), and
    /// the transactions that carried them (DeliveryGroupCommit).
    const DeliveryGroupCommit &decidedDeliveries() const { return m_decidedDeliveries; }
    /// Deliveries settled in one commit, and one-commit attempts that wrote nothing and
    /// went the accepted-first way (a busy pay lock, the key store out of reach, a stale
    /// fence, a lost lease, a failed transaction).
    qint64 oneCommitSettled() const { return m_oneCommitted.load(); }
    qint64 oneCommitFellBack() const { return m_oneCommitFellBack.load(); }
    /// Copies handleFromMemory() answered (each also a byte-identical copy not verified again).
    qint64 answeredFromMemory() const { return m_answeredFromMemory.load(); }

private:
    struct Context;
    struct PayLock;
    struct SettleAttempt;

    // The way in (callbackreceive.cpp): the seen set, the content checks, the log row.
    CallbackOutcome process(Context &ctx);
    std::optional<CallbackOutcome> answerFromSeenSet(Context &ctx);
    bool seenCopyMatches(Context &ctx, const SeenEntry &entry) const;
    std::optional<CallbackOutcome> checkContent(Context &ctx);
    CallbackOutcome refuseMismatch(Context &ctx, const QString &field);
    std::optional<CallbackOutcome> acceptDurably(Context &ctx);
    QString merchantMismatch(const Context &ctx) const;
    void applyScenarioSwitches(Context &ctx) const;
    bool writesDeliveryRow(const Context &ctx) const;
    std::optional<CallbackOutcome> appendUndecided(Context &ctx);
    CallbackOutcome decidedOnArrival(Context &ctx, const CallbackOutcome &decided, bool finishFailure);
    CallbackOutcome answerSeen(Context &ctx);

    // The paid transaction (callbacksettle.cpp), shared by both paths.
    CallbackOutcome settle(Context &ctx);
    Result<void> settleIn(CallbackTransaction &tx, Context &ctx, PayLock &lock, SettleAttempt &attempt);
    Result<void> recordLostCas(CallbackTransaction &tx, Context &ctx, SettleAttempt &attempt);
    PayLock takePayLock(const Context &ctx, std::chrono::milliseconds wait);
    std::optional<CallbackOutcome> stoppedAtLockHook(const Context &ctx, PayLock &lock) const;
    void releasePayLock(PayLock &lock);
    void afterTransaction(const Context &ctx, bool committed, PayLock &lock);
    Result<TransitionOutcome> casToPaid(CallbackTransaction &tx, const Context &ctx, std::optional<qint64> fence) const;
    void publishSettled(const Context &ctx, const SettleAttempt &attempt);

    // One commit (callbackonecommit.cpp).
    bool oneCommitApplies(Context &ctx);
    /// The delivery settled in one commit; nullopt: rolled back, nothing written, the
    /// accepted-first path goes on.
    std::optional<CallbackOutcome> settleInOneCommit(Context &ctx);
    Result<void> oneCommitIn(CallbackTransaction &tx, Context &ctx, const PayLock &lock, SettleAttempt &attempt);
    Result<void> logDeliveryIn(CallbackTransaction &tx, Context &ctx, SettleAttempt &attempt);
    std::optional<CallbackOutcome> afterOneCommitRolledBack(Context &ctx, const SettleAttempt &attempt,
                                                            const Error &error);
    /// The one-commit attempt rolled back and `outcome` answers the delivery all the same.
    CallbackOutcome answeredWithoutTransaction(Context &ctx, const CallbackOutcome &outcome);

    // The operator's replay (callbackreplay.cpp).
    CallbackOutcome predictSettle(Context &ctx) const;
    std::optional<CallbackOutcome> replayLogRow(Context &ctx);
    std::optional<CallbackOutcome> loadStored(Context &ctx, qint64 deliveryId);

    DeliveryRecord deliveryRecordOf(const Context &ctx, const std::optional<CallbackOutcome> &decided) const;
    void reportStaleFence(const QString &orderNo, const QString &payNo, qint64 fence);
    CallbackMode currentMode();
    CallbackOutcome finish(Context &ctx, CallbackOutcome outcome);
    /// A decided delivery row written through the group commit: the answer once it has
    /// committed (counted by finish()), or its failure (unavailable, and counted only when
    /// finishFailure, as the rejections' are).
    void answerOnceWritten(Context &ctx, DeliveryRecord row, CallbackOutcome outcome, bool finishFailure,
                           const Answer &answer);
    /// A delivery that failed verification: its metadata row through the group commit.
    void answerUnverified(const RawDelivery &delivery, const Error &error, const Answer &answer);
    bool hook(CallbackHookPoint point, const Context &ctx, LockHandle *lock = nullptr) const;
    void event(const QString &name) const;
    void publishFinding(const CallbackFinding &finding) const;
    QString systemActor() const;

    const NotificationVerifier &m_verifier;
    CallbackStore &m_store;
    CallbackModeStore &m_modes;
    DistributedLock &m_locks;
    SeenProcessedSet *m_seen;
    const Clock &m_clock;
    CallbackPipelineOptions m_options;
    LogThrottle m_lockUnavailableLog; ///< one "L3 unavailable" line a second while Redis is down

    mutable std::mutex m_mutex;
    CallbackLayerSwitches m_switches;
    CallbackMode m_cachedMode = CallbackMode::Normal;
    qint64 m_modeReadAtMs = -1;

    std::array<std::atomic<qint64>, 8> m_byLayer{};
    std::atomic<qint64> m_staleFence{0};
    std::atomic<qint64> m_unfenced{0};
    std::atomic<qint64> m_oneCommitted{0};
    std::atomic<qint64> m_oneCommitFellBack{0};
    std::atomic<qint64> m_answeredFromMemory{0};
    DeliveryGroupCommit m_decidedDeliveries;
};

/// The notification CallbackPipeline::settleConfirmed takes for a trade that the platform's
/// own (verified) query answered Paid: channel, pay_no and amount as the platform says,
/// out_trade_no `paymentNo`. Used by the patrol and the order closer.
PaymentNotification confirmedByQuery(Channel channel, const QString &paymentNo, const GatewayTrade &trade);

} // namespace payonce::core
