#include "perfrecording.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QThread>

#include <csignal>

namespace payonce::bench {

std::unique_ptr<PerfRecording> PerfRecording::start(qint64 pid, const QString &dir, const QString &phase,
                                                    QString *error)
{
    if (!QDir().mkpath(dir)) {
        *error = QStringLiteral("cannot create ") + dir;
        return nullptr;
    }
    std::unique_ptr<PerfRecording> recording(new PerfRecording);
    recording->m_dataPath = QDir(dir).filePath(phase + QStringLiteral(".data"));
    recording->m_reportPath = QDir(dir).filePath(phase + QStringLiteral(".txt"));
    recording->m_record = std::make_unique<QProcess>();
    recording->m_record->setProcessChannelMode(QProcess::MergedChannels);
    // 499 Hz: enough samples in a 15–20 s phase, little enough not to slow the agent down
    // (the frame pointers of Debian's Qt are absent, so dwarf unwinding: bigger, slower
    // to report, but whole stacks through Qt and libpq).
    recording->m_record->start(QStringLiteral("perf"),
                               {QStringLiteral("record"), QStringLiteral("-F"), QStringLiteral("499"),
                                QStringLiteral("--call-graph"), QStringLiteral("dwarf,16384"), QStringLiteral("-p"),
                                QString::number(pid), QStringLiteral("-o"), recording->m_dataPath});
    if (!recording->m_record->waitForStarted(5000)) {
        *error = QStringLiteral("perf record did not start: ") + recording->m_record->errorString();
        return nullptr;
    }
    // perf attaches asynchronously; a phase that began before it did would be missed in part.
    QThread::msleep(300);
    if (recording->m_record->state() != QProcess::Running) {
        *error = QStringLiteral("perf record exited at once: ")
                 + QString::fromLocal8Bit(recording->m_record->readAll());
        return nullptr;
    }
    return recording;
}

PerfRecording::~PerfRecording()
{
    if (m_record && m_record->state() != QProcess::NotRunning) {
        m_record->kill();
        m_record->waitForFinished(5000);
    }
}

bool PerfRecording::finish(QString *error)
{
    ::kill(pid_t(m_record->processId()), SIGINT);
    // perf ends on SIGINT with the signal's exit status; what tells it wrote its data is
    // its "Captured and wrote" line.
    const bool finished = m_record->waitForFinished(120000);
    const QString said = QString::fromLocal8Bit(m_record->readAll());
    if (!finished || !said.contains(u"Captured and wrote")) {
        *error = QStringLiteral("perf record failed: ") + said;
        return false;
    }
    // Flat: the functions where the samples fell (self time), then the same with their
    // callers folded in, which shows which of the agent's steps the time belongs to.
    QFile report(m_reportPath);
    if (!report.open(QIODevice::WriteOnly)) {
        *error = QStringLiteral("cannot write ") + m_reportPath;
        return false;
    }
    for (const bool children : {false, true}) {
        QProcess perfReport;
        perfReport.start(QStringLiteral("perf"),
                         {QStringLiteral("report"), QStringLiteral("-i"), m_dataPath, QStringLiteral("--stdio"),
                          children ? QStringLiteral("--children") : QStringLiteral("--no-children"),
                          QStringLiteral("--sort"), QStringLiteral("dso,symbol"), QStringLiteral("-g"),
                          QStringLiteral("none"), QStringLiteral("--percent-limit"), QStringLiteral("0.5")});
        if (!perfReport.waitForFinished(600000) || perfReport.exitCode() != 0) {
            *error = QStringLiteral("perf report failed: ") + QString::fromLocal8Bit(perfReport.readAllStandardError());
            return false;
        }
        report.write(children ? "\n# with children (inclusive)\n" : "# self (exclusive)\n");
        report.write(perfReport.readAllStandardOutput());
    }
    return true;
}

} // namespace payonce::bench
