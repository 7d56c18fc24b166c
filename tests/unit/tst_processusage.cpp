// payonce-bench's CPU accounting of a process tree (a PostgreSQL postmaster and its
// backends): a child that exited and was waited for keeps counting, in its parent's
// cutime/cstime, so the database server's CPU over a phase does not go backwards — and
// read "unknown" — when one of its backends ends during the phase.

#include "processusage.h"

#include <QTest>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

using namespace payonce::bench;

class TestProcessUsage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aChildThatEndedStillCounts()
    {
        const double before = processTreeCpuSeconds(::getpid());
        QVERIFY(before >= 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            // Burn 300 ms of CPU, then end.
            timespec now{};
            do {
                ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
            } while (now.tv_sec == 0 && now.tv_nsec < 300 * 1000 * 1000);
            ::_exit(0);
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        const double after = processTreeCpuSeconds(::getpid());
        // The child's 0.3 s, in 10 ms ticks; the parent only waited.
        QVERIFY2(after - before >= 0.25, qPrintable(QStringLiteral("before %1 s, after %2 s").arg(before).arg(after)));
    }
};

QTEST_GUILESS_MAIN(TestProcessUsage)
#include "tst_processusage.moc"
