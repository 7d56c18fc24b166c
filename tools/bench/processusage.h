#pragma once

#include <QtGlobal>

namespace payonce::bench {

/// CPU time consumed so far, in seconds (user + system).
/// selfCpuSeconds(): this process, from getrusage(RUSAGE_SELF).
/// processCpuSeconds(): another process, from /proc/<pid>/stat (utime + stime); -1 when
/// unreadable.
double selfCpuSeconds();
double processCpuSeconds(qint64 pid);
/// Online CPU cores.
int coreCount();
/// The 1-minute load average, -1 when unreadable.
double loadAverage();

/// CPU used by the benchmark and the agent over one phase: start() then stop(wall seconds).
class CpuWindow {
public:
    explicit CpuWindow(qint64 agentPid) : m_agentPid(agentPid) {}
    void start();
    void stop(double wallSeconds);
    /// The benchmark's CPU over wall time × cores: its share of the whole machine.
    double benchShareOfMachine() const { return m_benchShare; }
    /// The agent's CPU over wall time: 1.0 = one core busy the whole phase; -1 unknown.
    double agentCores() const { return m_agentCores; }

private:
    qint64 m_agentPid;
    double m_selfStart = 0;
    double m_agentStart = 0;
    double m_benchShare = 0;
    double m_agentCores = -1;
};

} // namespace payonce::bench
