#pragma once

#include "notificationrelay.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

namespace payonce::testsupport {

/// The platform's side of a duplicate storm against several agents, played by the test:
/// signed notifications (as payonce-sim sent them, kept by a NotificationRelay) each
/// delivered as `copies` identical POSTs released at one instant — copy k of notification
/// i to agent (i + k) mod agents, each over its own connection — `concurrentNotifications`
/// notifications at a time. As the platform does, a notification no copy of which was
/// acknowledged (200 with code SUCCESS) is sent again, all copies, on WeChat's schedule ×
/// timeScale, until acknowledged or the deadline. A dead agent (refused connection) or a
/// frozen one (timeout) is just an unacknowledged copy. A target may also be nginx in front
/// of the agents (Options::tlsPorts).
///
/// run() blocks; start() runs it on a thread of its own and wait() joins it. The counters
/// may be read from any thread while it runs (the chaos is timed on postsAnswered()).
class CallbackStorm {
public:
    struct Options {
        int copies = 5;
        int concurrentNotifications = 8;
        int requestTimeoutMs = 10000;
        double timeScale = 0.01;
        int deadlineMs = 180000;
        /// Targets that speak TLS (nginx in front of the agents), and the CA to trust.
        QList<int> tlsPorts;
        QString caCertificate;
    };
    struct Report {
        int notifications = 0;
        int acknowledged = 0;
        int rounds = 0;
        qint64 posts = 0;
        QMap<int, qint64> answersByStatus; ///< HTTP status → answers; 0: no answer (refused, timed out)
        qint64 elapsedMs = 0;
        QString describe() const;
    };

    /// `targets`: the agents' ports (and nginx's, if any), copy k of notification i to
    /// targets[(i + k) mod targets].
    CallbackStorm(QList<CapturedRequest> notifications, QList<int> targets, Options options);
    ~CallbackStorm();

    void start();
    Report wait();
    Report run();

    /// wait() with the calling thread's event loop running meanwhile — the test's thread
    /// reads the agents' output pipes, which must not fill while the storm runs.
    Report waitProcessingEvents();
    /// start(), then waitProcessingEvents().
    Report runProcessingEvents();
    bool finished() const { return m_finished.load(); }

    /// POSTs that ended (answered or not) so far, over all rounds.
    qint64 postsAnswered() const { return m_postsAnswered.load(); }
    /// The POSTs of the first round: notifications × copies.
    qint64 firstRoundPosts() const { return qint64(m_notifications.size()) * m_options.copies; }
    /// The notifications (their indexes) at least one copy of which was acknowledged so
    /// far — what the platform now believes delivered and will never send again.
    QList<int> acknowledgedSoFar() const;
    /// Per notification (its index), the copies answered SUCCESS so far: each is a delivery
    /// the agent said it has, so each must have its own delivery row.
    QHash<int, qint64> successesSoFar() const;

private:
    bool deliverCopies(int index);

    const QList<CapturedRequest> m_notifications;
    const QList<int> m_targets;
    const Options m_options;
    std::atomic<qint64> m_postsAnswered{0};
    std::atomic<bool> m_finished{false};
    mutable std::mutex m_mutex;
    Report m_report;                // answersByStatus under m_mutex while running
    QList<int> m_acknowledged;      // under m_mutex, in the order acknowledged
    QHash<int, qint64> m_successes; // under m_mutex
    std::thread m_thread;
};

} // namespace payonce::testsupport
