#include "callbackstorm.h"

#include "httptestsupport.h"
#include "storagefixture.h"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <vector>

namespace payonce::testsupport {

namespace {
// WeChat Pay's intervals between notification attempts, in seconds (docs/design.md).
constexpr qint64 kWeChatSchedule[] = {15,   15,   30,    180,   600,   1200,  1800, 1800,
                                      1800, 3600, 10800, 10800, 10800, 21600, 21600};

bool acknowledgedByWeChatRules(const QByteArray &response)
{
    const int status = httpStatusOf(response);
    return (status == 200 || status == 204) && httpBodyOf(response).contains("SUCCESS");
}
} // namespace

QString CallbackStorm::Report::describe() const
{
    QString answers;
    for (auto it = answersByStatus.begin(); it != answersByStatus.end(); ++it)
        answers += QStringLiteral(" %1:%2")
                       .arg(it.key() == 0 ? QStringLiteral("none") : QString::number(it.key()))
                       .arg(it.value());
    return QStringLiteral("%1 notifications, %2 acknowledged, %3 POSTs in %4 round(s) in %5 ms; answers%6")
        .arg(notifications)
        .arg(acknowledged)
        .arg(posts)
        .arg(rounds)
        .arg(elapsedMs)
        .arg(answers);
}

CallbackStorm::CallbackStorm(QList<CapturedRequest> notifications, QList<int> targets, Options options)
    : m_notifications(std::move(notifications)), m_targets(std::move(targets)), m_options(std::move(options))
{
}

CallbackStorm::~CallbackStorm()
{
    if (m_thread.joinable())
        m_thread.join();
}

void CallbackStorm::start()
{
    m_thread = std::thread([this] { (void)run(); });
}

CallbackStorm::Report CallbackStorm::runProcessingEvents()
{
    start();
    return waitProcessingEvents();
}

CallbackStorm::Report CallbackStorm::waitProcessingEvents()
{
    while (m_thread.joinable() && !finished())
        QTest::qWait(20);
    return wait();
}

CallbackStorm::Report CallbackStorm::wait()
{
    if (m_thread.joinable())
        m_thread.join();
    std::lock_guard guard(m_mutex);
    return m_report;
}

QList<int> CallbackStorm::acknowledgedSoFar() const
{
    std::lock_guard guard(m_mutex);
    return m_acknowledged;
}

QHash<int, qint64> CallbackStorm::successesSoFar() const
{
    std::lock_guard guard(m_mutex);
    return m_successes;
}

bool CallbackStorm::deliverCopies(int index)
{
    const QByteArray request = replayOf(m_notifications.at(index));
    std::atomic<bool> acknowledged{false};
    runConcurrently(m_options.copies, [&](int copy) {
        const int port = m_targets.at((index + copy) % m_targets.size());
        const QByteArray response = m_options.tlsPorts.contains(port)
                                        ? httpsExchange(port, m_options.caCertificate, request,
                                                        m_options.requestTimeoutMs)
                                        : httpExchange(port, request, m_options.requestTimeoutMs);
        const bool acknowledges = acknowledgedByWeChatRules(response);
        m_postsAnswered.fetch_add(1);
        std::lock_guard guard(m_mutex);
        if (acknowledges && !acknowledged.exchange(true))
            m_acknowledged.append(index);
        if (acknowledges)
            ++m_successes[index];
        ++m_report.answersByStatus[httpStatusOf(response)];
        ++m_report.posts;
    });
    return acknowledged;
}

CallbackStorm::Report CallbackStorm::run()
{
    QElapsedTimer elapsed;
    elapsed.start();
    std::vector<int> waiting(m_notifications.size());
    for (int i = 0; i < int(waiting.size()); ++i)
        waiting[i] = i;
    int rounds = 0;
    while (!waiting.empty() && elapsed.elapsed() < m_options.deadlineMs) {
        if (rounds > 0) {
            // The platform's next attempt for what nobody acknowledged, time-scaled.
            const qint64 interval = kWeChatSchedule[std::min<size_t>(rounds - 1, std::size(kWeChatSchedule) - 1)];
            const qint64 pauseMs = std::min<qint64>(qint64(double(interval) * 1000 * m_options.timeScale),
                                                    m_options.deadlineMs - elapsed.elapsed());
            std::this_thread::sleep_for(std::chrono::milliseconds(std::max<qint64>(0, pauseMs)));
        }
        ++rounds;
        std::vector<char> acknowledged(waiting.size(), 0);
        std::atomic<size_t> next{0};
        runConcurrently(m_options.concurrentNotifications, [&](int) {
            for (size_t j = next++; j < waiting.size(); j = next++)
                acknowledged[j] = deliverCopies(waiting[j]) ? 1 : 0;
        });
        std::vector<int> still;
        for (size_t j = 0; j < waiting.size(); ++j) {
            if (!acknowledged[j])
                still.push_back(waiting[j]);
        }
        waiting.swap(still);
    }
    std::lock_guard guard(m_mutex);
    m_report.notifications = int(m_notifications.size());
    m_report.acknowledged = int(m_notifications.size() - waiting.size());
    m_report.rounds = rounds;
    m_report.elapsedMs = elapsed.elapsed();
    m_finished = true;
    return m_report;
}

} // namespace payonce::testsupport
