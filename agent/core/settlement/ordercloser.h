#pragma once

#include "core/common/channel.h"
#include "core/ports/orderclosestore.h"

#include <QList>
#include <QString>

#include <functional>
#include <mutex>
#include <optional>

namespace payonce::core {

class AuditWriter;
class CallbackModeStore;
class CallbackPipeline;
class PaymentGateway;

struct OrderCloserOptions {
    /// A PENDING order unchanged for longer than this is closed; 0: the closer does nothing.
    qint64 pendingTimeoutMs = 30 * 60 * 1000;
    /// Orders listed per page; every page is worked through in one run.
    int pageSize = 200;
};

/// What the closer needs beyond its store. Without gateways or callbacks, an order with a
/// payment record is left PENDING (it cannot be closed at its platform).
struct OrderCloserPorts {
    std::function<PaymentGateway *(Channel)> gateways; ///< behind their breakers; null: channel not offered
    CallbackPipeline *callbacks = nullptr;             ///< settleConfirmed: a trade found paid is settled there
    CallbackModeStore *modes = nullptr;                ///< accept-only: nothing is closed or settled
    AuditWriter *audit = nullptr;                      ///< a settlement by the closer, as "system:closer"
};

/// Closes PENDING orders past their timeout (docs/design.md: PENDING → CLOSED, the gateway's
/// close-order is called), so that nothing can be paid for them afterwards.
///
/// For each expired order, oldest first: every trade that may exist at a platform is closed
/// there first (PaymentGateway::close is idempotent; a never-created trade closes fine). A
/// close refused as Conflict means the user paid meanwhile: the trade is queried and a Paid
/// answer is settled through CallbackPipeline::settleConfirmed — the callback path's own
/// L4/L3/L5 and side-effect keys, so the order becomes PAID once whoever else (the late
/// callback, the patrol) settles it at the same moment — and the order is not closed. Once
/// every trade is closed, OrderCloseStore::closeExpired makes the order CLOSED and its
/// records `closed` in one transaction with the audit row ("order.close" by
/// "system:closer", reason "not paid within N s"). An order without a payment record is
/// simply closed. Anything unclear — a gateway error, no gateway for a record's channel, a
/// callback row waiting to be processed, accept-only mode — leaves the order PENDING for
/// the next run and is logged with the reason. A payment that still arrives for a CLOSED
/// order is the callback path's: acknowledged, a double_payment finding, and the patrol
/// proposes its refund.
///
/// Known limit: a confirm reusing a `failed` record between the closer's platform close and
/// its CAS meets a closed trade at the platform and fails (503, order back to PENDING); the
/// next run closes the order.
///
/// Thread-safe: several closers (on several agents) may run over the same orders; the CAS
/// closes each once. runOnce() blocks the calling worker thread (gateway calls).
class OrderCloser {
public:
    struct OrderOutcome {
        QString orderNo;
        QString action; ///< "closed" | "settled" | "left" | "moved_on"
        QString why;
    };
    struct Report {
        bool acceptOnly = false; ///< the run did nothing: callbacks are in accept-only mode
        int closed = 0;          ///< PENDING → CLOSED by this run
        int settled = 0;         ///< found paid at the platform and settled (PAID) instead
        int left = 0;            ///< left PENDING for the next run (see the outcomes' why)
        int movedOn = 0;         ///< changed by someone else while this run worked on it
        QList<OrderOutcome> orders;
    };

    OrderCloser(OrderCloseStore &store, OrderCloserOptions options, OrderCloserPorts ports)
        : m_store(store), m_options(options), m_ports(std::move(ports))
    {
    }

    /// One pass at `nowMs` over every order expired by then.
    Result<Report> runOnce(qint64 nowMs);
    /// runOnce(), unless this closer is already running (the timer's run and an operator's
    /// at once): then nullopt and nothing done.
    Result<std::optional<Report>> tryRunOnce(qint64 nowMs);

    const OrderCloserOptions &options() const { return m_options; }

private:
    OrderOutcome closeOne(const ExpiredOrder &order, qint64 nowMs);

    OrderCloseStore &m_store;
    OrderCloserOptions m_options;
    OrderCloserPorts m_ports;
    std::mutex m_running;
};

} // namespace payonce::core
