#pragma once

#include <QString>
#include <QtGlobal>

namespace payonce::bench {

/// CPU time consumed so far, in seconds (user + system).
/// selfCpuSeconds(): this process, from getrusage(RUSAGE_SELF).
/// processCpuSeconds(): another process, from /proc/<pid>/stat (utime + stime); -1 when
/// unreadable.
double selfCpuSeconds();
double processCpuSeconds(qint64 pid);
/// CPU time of a process and of its direct children (a PostgreSQL postmaster and its
/// backends), in seconds; -1 when the root is unreadable. A child that ended and was
/// waited for still counts (in the root's cutime + cstime), so the sum never goes back.
double processTreeCpuSeconds(qint64 rootPid);
/// The pid in the first line of a pid file (PostgreSQL's postmaster.pid, mariadbd's), or -1.
qint64 pidFromFile(const QString &path);
/// Online CPU cores.
int coreCount();
/// The 1-minute load average, -1 when unreadable.
double loadAverage();

/// CPU used by the benchmark, the agent and the database server (when it is a process of
/// its own) over one phase: start() then stop(wall seconds).
class CpuWindow {
public:
    CpuWindow(qint64 agentPid, qint64 serverPid) : m_agentPid(agentPid), m_serverPid(serverPid) {}
    void start();
    void stop(double wallSeconds);
    /// The benchmark's CPU over wall time × cores: its share of the whole machine.
    double benchShareOfMachine() const { return m_benchShare; }
    /// The agent's CPU over wall time: 1.0 = one core busy the whole phase; -1 unknown.
    double agentCores() const { return m_agentCores; }
    /// The database server's CPU seconds over the phase (all its processes); -1 unknown or embedded.
    double serverCpuSeconds() const { return m_serverSeconds; }

private:
    qint64 m_agentPid;
    qint64 m_serverPid;
    double m_serverStart = -1;
    double m_serverSeconds = -1;
    double m_selfStart = 0;
    double m_agentStart = 0;
    double m_benchShare = 0;
    double m_agentCores = -1;
};

} // namespace payonce::bench
