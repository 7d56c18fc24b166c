#include "processusage.h"

#include <QFile>
#include <QList>

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

double processCpuSeconds(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray text = stat.readAll();
    // Fields after the command name, which is in parentheses and may contain spaces:
    // state is field 3, utime 14 and stime 15.
    const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13)
        return -1;
    const double ticks = double(::sysconf(_SC_CLK_TCK));
    return (fields[11].toDouble() + fields[12].toDouble()) / ticks;
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
}

void CpuWindow::stop(double wallSeconds)
{
    if (wallSeconds <= 0)
        return;
    m_benchShare = (selfCpuSeconds() - m_selfStart) / (wallSeconds * coreCount());
    const double agentNow = processCpuSeconds(m_agentPid);
    m_agentCores = (agentNow < 0 || m_agentStart < 0) ? -1 : (agentNow - m_agentStart) / wallSeconds;
}

} // namespace payonce::bench
