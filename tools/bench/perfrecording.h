#pragma once

#include <QString>

#include <memory>

class QProcess;

namespace payonce::bench {

/// `perf record -g` attached to one process for the length of a phase (--perf DIR), then
/// `perf report` of its hottest frames next to the data: DIR/<phase>.data and
/// DIR/<phase>.txt. Needs Debian's linux-perf and a kernel.perf_event_paranoid that lets
/// this user attach (root does).
class PerfRecording {
public:
    /// Starts recording pid into dir/<phase>.data; on failure says why in *error.
    static std::unique_ptr<PerfRecording> start(qint64 pid, const QString &dir, const QString &phase, QString *error);
    ~PerfRecording();

    /// Stops the recording (SIGINT, as Ctrl-C) and writes the report; false with *error
    /// when perf failed.
    bool finish(QString *error);
    QString reportPath() const { return m_reportPath; }

private:
    PerfRecording() = default;
    std::unique_ptr<QProcess> m_record;
    QString m_dataPath;
    QString m_reportPath;
};

} // namespace payonce::bench
