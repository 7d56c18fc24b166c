// The operator API (outbox, findings, compensations, reconciliation, audit) through HTTP on the real agent (with payonce-sim beside it),
// on each dialect: an order paid through the simulator has its order.paid event delivered
// by the agent's running dispatcher to a webhook receiver in this test; an extra coupon and
// extra points injected by raw SQL under other keys are found by POST
// /api/v1/reconciliation/run, proposed, approved under four eyes and executed once;
// findings resolve; every step is in GET /api/v1/audit; a dead event is redriven and then
// delivered; bad input is refused with nothing written. The slots run in order and share
// the agent, its database and the receiver.

#include "agentconfig.h"
#include "agentfixture.h"
#include "storagefixture.h"
#include "webhookreceiver.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QUrl>

using namespace payonce;
using namespace payonce::testsupport;

namespace {

const QString kPaid = QStringLiteral("ORD-OPS-1");
const QString kDead = QStringLiteral("ORD-OPS-2");
const QString kHeld = QStringLiteral("ORD-OPS-3");
const qint64 kUser = 77;

QJsonArray arrayOf(const HttpAnswer &answer)
{
    return QJsonDocument::fromJson(answer.body).array();
}

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QByteArray reason(const QString &text)
{
    return json({{QStringLiteral("reason"), text}});
}

/// The elements of a JSON array whose `field` equals `value` (numbers compared as numbers).
QList<QJsonObject> where(const QJsonArray &array, const QString &field, const QJsonValue &value)
{
    QList<QJsonObject> matching;
    for (const QJsonValue &element : array) {
        const QJsonValue v = element.toObject().value(field);
        if (value.isDouble() ? v.isDouble() && v.toDouble() == value.toDouble() : v == value)
            matching.append(element.toObject());
    }
    return matching;
}

} // namespace

class TestOpsApi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_receiver = std::make_unique<WebhookReceiver>(200);
        AgentProcess::Options options;
        // One attempt makes a failed delivery dead at once; no patrol timer, so every run
        // (and the resolving of findings) is the test's own.
        options.extraConfig = QJsonObject{
            {QStringLiteral("outbox"),
             QJsonObject{{QStringLiteral("webhook_urls"),
                          QJsonArray{m_receiver->url(QStringLiteral("/hooks/paid")).toString()}},
                         {QStringLiteral("max_attempts"), 1}}},
            noPatrolTimer(),
        };
        options.simNotifyTimeScale = kFastSimulator;
        QVERIFY2(m_agent.start(options), m_agent.error());
    }
    void cleanupTestCase() { m_agent.stop(); }

    // The running dispatcher delivers the order.paid event of a real payment to the
    // configured webhook, Idempotency-Key = event id, once; GET /outbox shows it delivered.
    void paidOrderIsDeliveredToTheWebhook()
    {
        QVERIFY(payThroughSim(kPaid, QStringLiteral("SKU-OPS-1")));
        const QByteArray key = "order.paid:" + kPaid.toUtf8();
        QTRY_COMPARE_WITH_TIMEOUT(m_receiver->requestsWithKey(key).size(), 1, 30000);
        const WebhookReceiver::Request request = m_receiver->requestsWithKey(key).first();
        QCOMPARE(request.method, QByteArray("POST"));
        QCOMPARE(request.path, QByteArray("/hooks/paid"));
        const QJsonObject body = QJsonDocument::fromJson(request.body).object();
        QCOMPARE(body.value(QStringLiteral("event_type")).toString(), QStringLiteral("order.paid"));
        QCOMPARE(body.value(QStringLiteral("aggregate_id")).toString(), kPaid);

        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM outbox WHERE event_id = ? AND status = 'delivered'",
                          {QString::fromUtf8(key)}),
            qint64(1), 30000);
        const HttpAnswer delivered = get(QStringLiteral("/api/v1/outbox?status=delivered"), kViewToken);
        QVERIFY2(delivered.status == 200, qPrintable(describe(delivered)));
        const auto rows = where(arrayOf(delivered), QStringLiteral("event_id"), QString::fromUtf8(key));
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().value(QStringLiteral("attempts")).toInt(), 1);
        QVERIFY(!rows.first().value(QStringLiteral("delivered_at")).toString().isEmpty());
        QCOMPARE(rows.first().value(QStringLiteral("payload")).toObject().value(QStringLiteral("order_no")).toString(),
                 kPaid);
        QCOMPARE(m_receiver->requestsWithKey(key).size(), 1);
    }

    // Extras written by raw SQL under other keys (a path that bypassed the side-effect
    // keys) are found by an operator's run and proposed by the patrol.
    void reconciliationRunFindsInjectedExtras()
    {
        exec("INSERT INTO user_coupon (order_no, user_id, template_id, status, fence, created_at, updated_at) "
             "VALUES (?, ?, 'WELCOME10-AGAIN', 'active', 1, 5, 5)",
             {kPaid, kUser});
        exec("INSERT INTO point_log (order_no, user_id, point_type, delta, fence, created_at) "
             "VALUES (?, ?, 'reward-replayed', 100, 1, 5)",
             {kPaid, kUser});
        m_extraCouponId = m_agent.count(
            "SELECT id FROM user_coupon WHERE order_no = ? AND template_id = 'WELCOME10-AGAIN'", {kPaid});
        QVERIFY(m_extraCouponId > 0);

        const HttpAnswer run = post(QStringLiteral("/api/v1/reconciliation/run"), kDeskToken,
                                    reason(QStringLiteral("coupon complaint")));
        QVERIFY2(run.status == 200, qPrintable(describe(run)));
        QVERIFY(!run.json().value(QStringLiteral("ran_at")).toString().isEmpty());
        const auto mismatches = where(run.json().value(QStringLiteral("findings")).toArray(), QStringLiteral("kind"),
                                      QStringLiteral("effect_mismatch"));
        QCOMPARE(mismatches.size(), 1);
        const QJsonObject finding = mismatches.first();
        QCOMPARE(finding.value(QStringLiteral("order_no")).toString(), kPaid);
        QCOMPARE(finding.value(QStringLiteral("status")).toString(), QStringLiteral("open"));
        const QJsonObject points =
            finding.value(QStringLiteral("evidence")).toObject().value(QStringLiteral("points")).toObject();
        QCOMPARE(points.value(QStringLiteral("expected")).toInteger(), 100);
        QCOMPARE(points.value(QStringLiteral("found")).toInteger(), 200);
        m_findingId = finding.value(QStringLiteral("id")).toInteger();

        const HttpAnswer open = get(QStringLiteral("/api/v1/findings?status=open&kind=effect_mismatch"), kViewToken);
        QVERIFY2(open.status == 200, qPrintable(describe(open)));
        const auto listed = where(arrayOf(open), QStringLiteral("id"), m_findingId);
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed.first().value(QStringLiteral("seen_count")).toInteger(), 1);
        QCOMPARE(listed.first().value(QStringLiteral("subject")).toString(), QString(QStringLiteral("order:") + kPaid));
        for (const char *field : {"first_seen", "last_seen"}) {
            const QString at = listed.first().value(QLatin1String(field)).toString();
            QVERIFY2(at.endsWith(u'Z') && QDateTime::fromString(at, Qt::ISODateWithMs).isValid(), qPrintable(at));
        }

        const HttpAnswer proposed = get(QStringLiteral("/api/v1/compensations?status=proposed"), kViewToken);
        QVERIFY2(proposed.status == 200, qPrintable(describe(proposed)));
        const auto byPatrol = where(arrayOf(proposed), QStringLiteral("proposed_by"), QStringLiteral("system:patrol"));
        QCOMPARE(byPatrol.size(), 2);
        for (const QJsonObject &c : byPatrol) {
            QCOMPARE(c.value(QStringLiteral("order_no")).toString(), kPaid);
            QCOMPARE(c.value(QStringLiteral("finding_id")).toInteger(), m_findingId);
            if (c.value(QStringLiteral("kind")).toString() == u"freeze_coupon")
                m_freezeId = c.value(QStringLiteral("id")).toInteger();
            else if (c.value(QStringLiteral("kind")).toString() == u"reverse_points")
                m_reverseId = c.value(QStringLiteral("id")).toInteger();
        }
        QVERIFY(m_freezeId > 0 && m_reverseId > 0);
    }

    // An operator's own proposal: its proposer cannot approve it (403 four_eyes), an
    // operator cannot decide at all (403 forbidden), another approver rejects it.
    void fourEyesAndReject()
    {
        const HttpAnswer mine = post(QStringLiteral("/api/v1/compensations"), kLeadToken,
                                     json({{QStringLiteral("kind"), QStringLiteral("restore_stock")},
                                           {QStringLiteral("order_no"), kPaid},
                                           {QStringLiteral("reason"), QStringLiteral("stock looked off")}}));
        QVERIFY2(mine.status == 201, qPrintable(describe(mine)));
        QCOMPARE(mine.json().value(QStringLiteral("proposed_by")).toString(), QStringLiteral("lead"));
        QCOMPARE(mine.json().value(QStringLiteral("status")).toString(), QStringLiteral("proposed"));
        const qint64 mineId = mine.json().value(QStringLiteral("id")).toInteger();
        const HttpAnswer self = post(QStringLiteral("/api/v1/compensations/%1/approve").arg(mineId), kLeadToken,
                                     reason(QStringLiteral("looks right to me")));
        QVERIFY2(self.status == 403 && self.errorCode() == u"four_eyes", qPrintable(describe(self)));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'proposed'", {mineId}),
                 qint64(1));

        const HttpAnswer desk = post(QStringLiteral("/api/v1/compensations"), kDeskToken,
                                     json({{QStringLiteral("kind"), QStringLiteral("restore_stock")},
                                           {QStringLiteral("order_no"), kPaid},
                                           {QStringLiteral("reason"), QStringLiteral("second opinion")}}));
        QVERIFY2(desk.status == 201, qPrintable(describe(desk)));
        m_rejectedId = desk.json().value(QStringLiteral("id")).toInteger();
        const HttpAnswer byOperator = post(QStringLiteral("/api/v1/compensations/%1/approve").arg(m_rejectedId),
                                           kDeskToken, reason(QStringLiteral("mine")));
        QVERIFY2(byOperator.status == 403 && byOperator.errorCode() == u"forbidden", qPrintable(describe(byOperator)));
        const HttpAnswer rejected = post(QStringLiteral("/api/v1/compensations/%1/reject").arg(m_rejectedId),
                                         kLeadToken, reason(QStringLiteral("stock is right")));
        QVERIFY2(rejected.status == 200, qPrintable(describe(rejected)));
        QCOMPARE(rejected.json().value(QStringLiteral("status")).toString(), QStringLiteral("rejected"));
        QCOMPARE(rejected.json().value(QStringLiteral("decided_by")).toString(), QStringLiteral("lead"));
        QCOMPARE(rejected.json().value(QStringLiteral("decision_reason")).toString(), QStringLiteral("stock is right"));
        // Approving what was rejected is a conflict, and changes nothing.
        const HttpAnswer late = post(QStringLiteral("/api/v1/compensations/%1/approve").arg(m_rejectedId), kLeadToken,
                                     reason(QStringLiteral("changed my mind")));
        QVERIFY2(late.status == 409, qPrintable(describe(late)));
        QCOMPARE(
            m_agent.count("SELECT COUNT(*) FROM compensations WHERE id = ? AND status = 'rejected'", {m_rejectedId}),
            qint64(1));
        const HttpAnswer rejectedList = get(QStringLiteral("/api/v1/compensations?status=rejected"), kViewToken);
        QCOMPARE(where(arrayOf(rejectedList), QStringLiteral("id"), m_rejectedId).size(), 1);
    }

    // The patrol's proposals approved by the approver execute in the same transaction;
    // balances are right afterwards, and approving again executes nothing more.
    void approvedProposalsExecuteOnce()
    {
        const HttpAnswer freeze = post(QStringLiteral("/api/v1/compensations/%1/approve").arg(m_freezeId), kLeadToken,
                                       reason(QStringLiteral("extra coupon")));
        QVERIFY2(freeze.status == 200, qPrintable(describe(freeze)));
        QCOMPARE(freeze.json().value(QStringLiteral("status")).toString(), QStringLiteral("executed"));
        const QJsonArray frozen = freeze.json()
                                      .value(QStringLiteral("result"))
                                      .toObject()
                                      .value(QStringLiteral("frozen_coupon_ids"))
                                      .toArray();
        QCOMPARE(frozen.size(), 1);
        QCOMPARE(frozen.at(0).toInteger(), m_extraCouponId);
        const HttpAnswer reverse = post(QStringLiteral("/api/v1/compensations/%1/approve").arg(m_reverseId), kLeadToken,
                                        reason(QStringLiteral("extra points")));
        QVERIFY2(reverse.status == 200, qPrintable(describe(reverse)));
        QCOMPARE(reverse.json().value(QStringLiteral("status")).toString(), QStringLiteral("executed"));
        QCOMPARE(
            reverse.json().value(QStringLiteral("result")).toObject().value(QStringLiteral("points_delta")).toInteger(),
            -100);

        for (int round = 0; round < 2; ++round) {
            QCOMPARE(
                m_agent.count("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'active'", {kPaid}),
                qint64(1));
            QCOMPARE(
                m_agent.count("SELECT COUNT(*) FROM user_coupon WHERE order_no = ? AND status = 'frozen'", {kPaid}),
                qint64(1));
            QCOMPARE(m_agent.count("SELECT SUM(delta) FROM point_log WHERE order_no = ?", {kPaid}), qint64(100));
            QCOMPARE(m_agent.count("SELECT COUNT(*) FROM point_log WHERE order_no = ? AND delta < 0", {kPaid}),
                     qint64(1));
            if (round == 1)
                break;
            // Again: 200 with the row as it stands, nothing executed twice.
            const HttpAnswer again = post(QStringLiteral("/api/v1/compensations/%1/approve").arg(m_reverseId),
                                          kLeadToken, reason(QStringLiteral("extra points, again")));
            QVERIFY2(again.status == 200, qPrintable(describe(again)));
            QCOMPARE(again.json().value(QStringLiteral("status")).toString(), QStringLiteral("executed"));
        }
        const HttpAnswer executed = get(QStringLiteral("/api/v1/compensations?status=executed"), kViewToken);
        QCOMPARE(where(arrayOf(executed), QStringLiteral("order_no"), kPaid).size(), 2);
    }

    // With the extras repaired, a second run finds nothing for the order and the finding
    // is resolved.
    void secondRunResolvesTheFinding()
    {
        const HttpAnswer run = post(QStringLiteral("/api/v1/reconciliation/run"), kDeskToken,
                                    reason(QStringLiteral("after the repair")));
        QVERIFY2(run.status == 200, qPrintable(describe(run)));
        QCOMPARE(
            where(run.json().value(QStringLiteral("findings")).toArray(), QStringLiteral("order_no"), kPaid).size(), 0);
        const HttpAnswer resolved = get(QStringLiteral("/api/v1/findings?status=resolved&kind=effect_mismatch"),
                                        kViewToken);
        QVERIFY2(resolved.status == 200, qPrintable(describe(resolved)));
        const auto rows = where(arrayOf(resolved), QStringLiteral("id"), m_findingId);
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().value(QStringLiteral("status")).toString(), QStringLiteral("resolved"));
        const HttpAnswer open = get(QStringLiteral("/api/v1/findings?status=open"), kViewToken);
        QCOMPARE(where(arrayOf(open), QStringLiteral("id"), m_findingId).size(), 0);
    }

    // Every step above is in the audit trail with its actor and reason; the filters work.
    void auditShowsEveryStep()
    {
        const HttpAnswer runs = get(QStringLiteral("/api/v1/audit?actor=desk&action=reconciliation.run"), kViewToken);
        QVERIFY2(runs.status == 200, qPrintable(describe(runs)));
        const QJsonArray runRows = arrayOf(runs);
        QCOMPARE(runRows.size(), 2);
        QCOMPARE(runRows.at(0).toObject().value(QStringLiteral("reason")).toString(),
                 QStringLiteral("after the repair"));
        QCOMPARE(runRows.at(1).toObject().value(QStringLiteral("reason")).toString(),
                 QStringLiteral("coupon complaint"));
        QCOMPARE(runRows.at(1)
                     .toObject()
                     .value(QStringLiteral("after"))
                     .toObject()
                     .value(QStringLiteral("ids"))
                     .toArray()
                     .size(),
                 1);

        const QJsonArray proposals = auditRows(QStringLiteral("action=compensation.propose"));
        QCOMPARE(where(proposals, QStringLiteral("actor"), QStringLiteral("system:patrol")).size(), 2);
        QCOMPARE(where(proposals, QStringLiteral("actor"), QStringLiteral("lead")).size(), 1);
        QCOMPARE(where(proposals, QStringLiteral("actor"), QStringLiteral("desk")).size(), 1);
        QCOMPARE(auditRows(QStringLiteral("action=compensation.approve&actor=lead")).size(), 2);
        QCOMPARE(auditRows(QStringLiteral("action=compensation.execute")).size(), 2);
        const QJsonArray rejects = auditRows(QStringLiteral("action=compensation.reject"));
        QCOMPARE(rejects.size(), 1);
        QCOMPARE(rejects.at(0).toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("stock is right"));

        // One compensation's whole story, newest first: executed, approved, proposed.
        const QJsonArray story = auditRows(QStringLiteral("target=compensation:%1").arg(m_reverseId));
        QCOMPARE(story.size(), 3);
        QCOMPARE(story.at(0).toObject().value(QStringLiteral("action")).toString(),
                 QStringLiteral("compensation.execute"));
        QCOMPARE(story.at(2).toObject().value(QStringLiteral("action")).toString(),
                 QStringLiteral("compensation.propose"));
        QCOMPARE(story.at(1).toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("extra points"));

        const QJsonArray all = auditRows(QStringLiteral("since=2000-01-01T00:00:00Z&limit=1000"));
        QCOMPARE(qint64(all.size()), m_agent.count("SELECT COUNT(*) FROM audit_log"));
        for (const QJsonValue &row : all) {
            QVERIFY(!row.toObject().value(QStringLiteral("actor")).toString().isEmpty());
            QVERIFY(!row.toObject().value(QStringLiteral("reason")).toString().isEmpty());
        }
        QCOMPARE(auditRows(QStringLiteral("limit=1")).size(), 1);
        const QString future = QDateTime::currentDateTimeUtc().addDays(1).toString(Qt::ISODateWithMs);
        QCOMPARE(auditRows(QStringLiteral("since=") + QString::fromLatin1(QUrl::toPercentEncoding(future))).size(), 0);
    }

    // An event whose receiver fails is dead after max_attempts (1 here), listed, redriven
    // with a reason, and delivered once the receiver answers 200.
    void deadEventIsRedrivenAndDelivered()
    {
        m_receiver->setStatus(500);
        QVERIFY(payThroughSim(kDead, QStringLiteral("SKU-OPS-2")));
        const QString eventId = QStringLiteral("order.paid:") + kDead;
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM outbox WHERE event_id = ? AND status = 'dead'", {eventId}), qint64(1),
            30000);
        QCOMPARE(m_receiver->requestsWithKey(eventId.toUtf8()).size(), 1);
        const auto dead = where(arrayOf(get(QStringLiteral("/api/v1/outbox?status=dead"), kViewToken)),
                                QStringLiteral("event_id"), eventId);
        QCOMPARE(dead.size(), 1);
        QVERIFY2(dead.first().value(QStringLiteral("last_error")).toString().contains(u"500"),
                 qPrintable(dead.first().value(QStringLiteral("last_error")).toString()));
        const qint64 id = dead.first().value(QStringLiteral("id")).toInteger();
        const QString redrive = QStringLiteral("/api/v1/outbox/%1/redrive").arg(id);

        const HttpAnswer noReason = post(redrive, kDeskToken, "{}");
        QVERIFY2(noReason.status == 400 && noReason.errorCode() == u"invalid_request", qPrintable(describe(noReason)));
        QVERIFY2(noReason.json()
                     .value(QStringLiteral("error"))
                     .toObject()
                     .value(QStringLiteral("message"))
                     .toString()
                     .contains(u"reason"),
                 qPrintable(describe(noReason)));
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM outbox WHERE id = ? AND status = 'dead' AND redriven = 0", {id}),
                 qint64(1));
        QCOMPARE(post(redrive, kViewToken, reason(QStringLiteral("viewer"))).status, 403);

        m_receiver->setStatus(200);
        const HttpAnswer redriven = post(redrive, kDeskToken, reason(QStringLiteral("receiver fixed")));
        QVERIFY2(redriven.status == 200, qPrintable(describe(redriven)));
        QCOMPARE(redriven.json().value(QStringLiteral("redriven")).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM outbox WHERE id = ? AND status = 'delivered'", {id}), qint64(1), 30000);
        QCOMPARE(m_receiver->requestsWithKey(eventId.toUtf8()).size(), 2);
        const HttpAnswer twice = post(redrive, kDeskToken, reason(QStringLiteral("again")));
        QVERIFY2(twice.status == 409, qPrintable(describe(twice)));

        const QJsonArray audited = auditRows(QStringLiteral("action=outbox.redrive&target=outbox:%1").arg(id));
        QCOMPARE(audited.size(), 1);
        const QJsonObject line = audited.at(0).toObject();
        QCOMPARE(line.value(QStringLiteral("actor")).toString(), QStringLiteral("desk"));
        QCOMPARE(line.value(QStringLiteral("reason")).toString(), QStringLiteral("receiver fixed"));
        QCOMPARE(line.value(QStringLiteral("before")).toObject().value(QStringLiteral("status")).toString(),
                 QStringLiteral("dead"));
        QCOMPARE(line.value(QStringLiteral("after")).toObject().value(QStringLiteral("status")).toString(),
                 QStringLiteral("pending"));
    }

    // The webhook has its own breaker, listed and forced like the gateways': forced open,
    // no POST is made and the event fails at once (dead here, max_attempts 1); back to
    // auto, the redriven event is delivered once.
    void webhookBreakerForcedOpenHoldsDeliveries()
    {
        const QString name = QStringLiteral("webhook.order.paid");
        const auto listed = where(arrayOf(get(QStringLiteral("/api/v1/breakers"), kViewToken)), QStringLiteral("name"),
                                  name);
        QCOMPARE(listed.size(), 1);
        const HttpAnswer forced = post(QStringLiteral("/api/v1/breakers/") + name, kDeskToken,
                                       json({{QStringLiteral("mode"), QStringLiteral("forced_open")},
                                             {QStringLiteral("reason"), QStringLiteral("receiver maintenance")},
                                             {QStringLiteral("expires_in"), 600}}));
        QVERIFY2(forced.status == 200, qPrintable(describe(forced)));

        QVERIFY(payThroughSim(kHeld, QStringLiteral("SKU-OPS-3")));
        const QString eventId = QStringLiteral("order.paid:") + kHeld;
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM outbox WHERE event_id = ? AND status = 'dead'", {eventId}), qint64(1),
            30000);
        QCOMPARE(m_receiver->requestsWithKey(eventId.toUtf8()).size(), 0);
        const auto dead = where(arrayOf(get(QStringLiteral("/api/v1/outbox?status=dead"), kViewToken)),
                                QStringLiteral("event_id"), eventId);
        QCOMPARE(dead.size(), 1);
        QVERIFY2(dead.first().value(QStringLiteral("last_error")).toString().contains(u"open"),
                 qPrintable(dead.first().value(QStringLiteral("last_error")).toString()));

        const HttpAnswer back = post(QStringLiteral("/api/v1/breakers/") + name, kDeskToken,
                                     json({{QStringLiteral("mode"), QStringLiteral("auto")},
                                           {QStringLiteral("reason"), QStringLiteral("maintenance over")}}));
        QVERIFY2(back.status == 200, qPrintable(describe(back)));
        const qint64 id = dead.first().value(QStringLiteral("id")).toInteger();
        const HttpAnswer redriven = post(QStringLiteral("/api/v1/outbox/%1/redrive").arg(id), kDeskToken,
                                         reason(QStringLiteral("breaker closed again")));
        QVERIFY2(redriven.status == 200, qPrintable(describe(redriven)));
        QTRY_COMPARE_WITH_TIMEOUT(
            m_agent.count("SELECT COUNT(*) FROM outbox WHERE id = ? AND status = 'delivered'", {id}), qint64(1), 30000);
        QCOMPARE(m_receiver->requestsWithKey(eventId.toUtf8()).size(), 1);
    }

    // A refund proposal names the payment and the amount to give back; they come back as
    // stored (the amount as a decimal string, never a float).
    void refundProposalNamesPaymentAndAmount()
    {
        // A proposal is checked when it is made: it must name the order's processed payment.
        const QString payNo = firstValueText(m_agent.database(),
                                             QStringLiteral("SELECT pay_no FROM orders WHERE order_no = ?"), {kPaid});
        QVERIFY(!payNo.isEmpty() && !payNo.startsWith(u'<'));
        const HttpAnswer proposed = post(QStringLiteral("/api/v1/compensations"), kDeskToken,
                                         json({{QStringLiteral("kind"), QStringLiteral("refund")},
                                               {QStringLiteral("order_no"), kPaid},
                                               {QStringLiteral("pay_no"), payNo},
                                               {QStringLiteral("amount"), QStringLiteral("5.50")},
                                               {QStringLiteral("reason"), QStringLiteral("customer paid twice")}}));
        QVERIFY2(proposed.status == 201, qPrintable(describe(proposed)));
        QCOMPARE(proposed.json().value(QStringLiteral("pay_no")).toString(), payNo);
        QCOMPARE(proposed.json().value(QStringLiteral("amount")).toString(), QStringLiteral("5.50"));
        const qint64 id = proposed.json().value(QStringLiteral("id")).toInteger();
        QCOMPARE(m_agent.count("SELECT COUNT(*) FROM compensations WHERE id = ? AND amount_fen = 550 AND pay_no = ?",
                               {id, payNo}),
                 qint64(1));
        const auto listed = where(arrayOf(get(QStringLiteral("/api/v1/compensations?status=proposed"), kViewToken)),
                                  QStringLiteral("id"), QJsonValue(id));
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed.first().value(QStringLiteral("amount")).toString(), QStringLiteral("5.50"));
        QVERIFY(post(QStringLiteral("/api/v1/compensations/%1/reject").arg(id), kLeadToken,
                     reason(QStringLiteral("not this one")))
                    .status
                == 200);
    }

    void badInputWritesNothing_data()
    {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("token");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        const QByteArray ok = reason(QStringLiteral("because"));
        auto row = [](const char *name, const char *method, const char *path, const char *token, const QByteArray &body,
                      int status, const char *code) {
            QTest::newRow(name) << QByteArray(method) << QString::fromLatin1(path) << QByteArray(token) << body
                                << status << QString::fromLatin1(code);
        };
        row("outbox bad status", "GET", "/api/v1/outbox?status=stuck", kViewToken, {}, 400, "invalid_request");
        row("outbox limit 0", "GET", "/api/v1/outbox?limit=0", kViewToken, {}, 400, "invalid_request");
        row("outbox limit text", "GET", "/api/v1/outbox?limit=ten", kViewToken, {}, 400, "invalid_request");
        row("outbox no token", "GET", "/api/v1/outbox", "", {}, 401, "unauthenticated");
        row("redrive unknown id", "POST", "/api/v1/outbox/987654321/redrive", kDeskToken, ok, 404, "not_found");
        row("redrive bad id", "POST", "/api/v1/outbox/abc/redrive", kDeskToken, ok, 400, "invalid_request");
        row("redrive no reason", "POST", "/api/v1/outbox/1/redrive", kDeskToken, "{}", 400, "invalid_request");
        row("redrive by viewer", "POST", "/api/v1/outbox/1/redrive", kViewToken, ok, 403, "forbidden");
        row("findings bad status", "GET", "/api/v1/findings?status=closed", kViewToken, {}, 400, "invalid_request");
        row("findings bad kind", "GET", "/api/v1/findings?kind=gremlins", kViewToken, {}, 400, "invalid_request");
        row("compensations bad status", "GET", "/api/v1/compensations?status=maybe", kViewToken, {}, 400,
            "invalid_request");
        row("propose by viewer", "POST", "/api/v1/compensations", kViewToken,
            json({{QStringLiteral("kind"), QStringLiteral("freeze_coupon")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            403, "forbidden");
        row("refund amount as a number", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("refund")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("amount"), 12.5},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            400, "invalid_amount");
        row("refund amount zero", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("refund")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("amount"), QStringLiteral("0.00")},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            400, "invalid_amount");
        row("refund bad pay_no", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("refund")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("pay_no"), QStringLiteral("no spaces please")},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            400, "invalid_request");
        row("pay_no on a coupon freeze", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("freeze_coupon")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("pay_no"), QStringLiteral("4200000001")},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            400, "invalid_request");
        row("propose bad kind", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("burn")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            400, "invalid_request");
        row("propose no reason", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("freeze_coupon")}, {QStringLiteral("order_no"), kPaid}}), 400,
            "invalid_request");
        row("propose blank reason", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("freeze_coupon")},
                  {QStringLiteral("order_no"), kPaid},
                  {QStringLiteral("reason"), QStringLiteral("   ")}}),
            400, "invalid_request");
        row("propose bad order_no", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("freeze_coupon")},
                  {QStringLiteral("order_no"), QStringLiteral("no such!")},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            400, "invalid_request");
        row("propose unknown order", "POST", "/api/v1/compensations", kDeskToken,
            json({{QStringLiteral("kind"), QStringLiteral("freeze_coupon")},
                  {QStringLiteral("order_no"), QStringLiteral("ORD-OPS-NOPE")},
                  {QStringLiteral("reason"), QStringLiteral("x")}}),
            404, "order_not_found");
        row("propose not json", "POST", "/api/v1/compensations", kDeskToken, "{kind:", 400, "invalid_request");
        row("approve bad id", "POST", "/api/v1/compensations/abc/approve", kLeadToken, ok, 400, "invalid_request");
        row("approve unknown id", "POST", "/api/v1/compensations/987654321/approve", kLeadToken, ok, 404, "not_found");
        row("approve by operator", "POST", "/api/v1/compensations/1/approve", kDeskToken, ok, 403, "forbidden");
        row("reject no reason", "POST", "/api/v1/compensations/1/reject", kLeadToken, "{}", 400, "invalid_request");
        row("run by viewer", "POST", "/api/v1/reconciliation/run", kViewToken, ok, 403, "forbidden");
        row("run no reason", "POST", "/api/v1/reconciliation/run", kDeskToken, "{}", 400, "invalid_request");
        row("audit bad since", "GET", "/api/v1/audit?since=yesterday", kViewToken, {}, 400, "invalid_request");
        row("audit empty actor", "GET", "/api/v1/audit?actor=", kViewToken, {}, 400, "invalid_request");
        row("audit limit 5000", "GET", "/api/v1/audit?limit=5000", kViewToken, {}, 400, "invalid_request");
    }
    void badInputWritesNothing()
    {
        QFETCH(QByteArray, method);
        QFETCH(QString, path);
        QFETCH(QByteArray, token);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QString, code);
        const QList<qint64> before = writtenState();
        const HttpAnswer answer = m_agent->call(method, path, body, bearer(token.constData()));
        QVERIFY2(answer.status == status && answer.errorCode() == code, qPrintable(describe(answer)));
        QVERIFY(!answer.json()
                     .value(QStringLiteral("error"))
                     .toObject()
                     .value(QStringLiteral("message"))
                     .toString()
                     .isEmpty());
        QCOMPARE(writtenState(), before);
    }

private:
    HttpAnswer get(const QString &path, const char *token) const
    {
        return m_agent->call("GET", path, {}, bearer(token));
    }
    HttpAnswer post(const QString &path, const char *token, const QByteArray &body) const
    {
        return m_agent->call("POST", path, body, bearer(token));
    }

    QJsonArray auditRows(const QString &query)
    {
        const HttpAnswer answer = get(QStringLiteral("/api/v1/audit?") + query, kViewToken);
        if (answer.status != 200)
            qWarning("GET /api/v1/audit?%s: %s", qPrintable(query), qPrintable(describe(answer)));
        return arrayOf(answer);
    }

    /// Creates an order of one unit of `sku` for kUser, confirms it on WeChat and has the
    /// simulator pay it; true once the order is PAID.
    bool payThroughSim(const QString &orderNo, const QString &sku)
    {
        QString error;
        const QString paymentNo = m_agent->confirmedOrder(orderNo, kUser, QStringLiteral("12.00"), sku,
                                                          QStringLiteral("wechat"), &error);
        if (paymentNo.isEmpty()) {
            qWarning("%s", qPrintable(error));
            return false;
        }
        const HttpAnswer paid = m_agent->simPay(QStringLiteral("wechat"), paymentNo);
        if (paid.status != 200) {
            qWarning("sim pay: %s", qPrintable(describe(paid)));
            return false;
        }
        return QTest::qWaitFor(
            [&] {
                return m_agent.count("SELECT COUNT(*) FROM orders WHERE order_no = ? AND status = 'PAID'", {orderNo})
                       == 1;
            },
            30000);
    }

    /// What a refused request must not change.
    QList<qint64> writtenState()
    {
        return {m_agent.count("SELECT COUNT(*) FROM audit_log"),
                m_agent.count("SELECT COUNT(*) FROM compensations"),
                m_agent.count("SELECT COUNT(*) FROM compensations WHERE status = 'proposed'"),
                m_agent.count("SELECT COUNT(*) FROM findings"),
                m_agent.count("SELECT COUNT(*) FROM outbox WHERE status = 'pending'"),
                m_agent.count("SELECT COUNT(*) FROM outbox WHERE redriven = 1")};
    }

    void exec(const char *sql, const QVariantList &binds) { QVERIFY(m_agent.exec(sql, binds)); }

    std::unique_ptr<WebhookReceiver> m_receiver;
    AgentFixture m_agent;
    qint64 m_extraCouponId = 0;
    qint64 m_findingId = 0;
    qint64 m_freezeId = 0;
    qint64 m_reverseId = 0;
    qint64 m_rejectedId = 0;
};

QTEST_GUILESS_MAIN(TestOpsApi)
#include "tst_opsapi.moc"
