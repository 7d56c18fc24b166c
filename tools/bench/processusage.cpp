#include "processusage.h"

#include <QDir>
#include <QFile>
#include <QList>
#include <QStringList>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

namespace payonce::bench {

double selfCpuSeconds()
{
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
           + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

namespace {

/// /proc/<pid>/stat's fields after the command name, which is in parentheses and may
/// contain spaces: [0] is the state (field 3), [1] the parent (4), [11] utime (14), [12]
/// stime (15), [13] cutime (16), [14] cstime (17). Empty when unreadable.
QList<QByteArray> statFields(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return {};
    const QByteArray text = stat.readAll();
    const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    return fields.size() < 15 ? QList<QByteArray>() : fields;
}

double cpuSecondsOf(const QList<QByteArray> &fields)
{
    return (fields[11].toDouble() + fields[12].toDouble()) / double(::sysconf(_SC_CLK_TCK));
}

} // namespace

double processCpuSeconds(qint64 pid)
{
    const QList<QByteArray> fields = statFields(pid);
    return fields.isEmpty() ? -1 : cpuSecondsOf(fields);
}

double processTreeCpuSeconds(qint64 rootPid)
{
    const QList<QByteArray> root = statFields(rootPid);
    if (root.isEmpty())
        return -1;
    // The root's own time and that of its children that ended and were waited for
    // (cutime + cstime): a backend that exits during a phase moves its time there, so the
    // sum does not go backwards.
    double total = cpuSecondsOf(root) + (root[13].toDouble() + root[14].toDouble()) / double(::sysconf(_SC_CLK_TCK));
    const QByteArray parent = QByteArray::number(rootPid);
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool numeric = false;
        const qint64 pid = entry.toLongLong(&numeric);
        if (!numeric || pid == rootPid)
            continue;
        const QList<QByteArray> fields = statFields(pid);
        if (!fields.isEmpty() && fields[1] == parent)
            total += cpuSecondsOf(fields);
    }
    return total;
}

qint64 pidFromFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return -1;
    bool ok = false;
    const qint64 pid = file.readLine().trimmed().toLongLong(&ok);
    return ok && pid > 0 ? pid : -1;
}

int coreCount()
{
    return int(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

double loadAverage()
{
    double load[1] = {-1};
    return ::getloadavg(load, 1) == 1 ? load[0] : -1;
}

void CpuWindow::start()
{
    m_selfStart = selfCpuSeconds();
    m_agentStart = processCpuSeconds(m_agentPid);
    m_serverStart = m_serverPid > 0 ? processTreeCpuSeconds(m_serverPid) : -1;
}

void CpuWindow::stop(double wallSeconds)
{
    if (wallSeconds <= 0)
        return;
    m_benchShare = (selfCpuSeconds() - m_selfStart) / (wallSeconds * coreCount());
    const double agentNow = processCpuSeconds(m_agentPid);
    m_agentCores = (agentNow < 0 || m_agentStart < 0) ? -1 : (agentNow - m_agentStart) / wallSeconds;
    const double serverNow = m_serverPid > 0 ? processTreeCpuSeconds(m_serverPid) : -1;
    m_serverSeconds = (serverNow < 0 || m_serverStart < 0) ? -1 : serverNow - m_serverStart;
}

} // namespace payonce::bench
