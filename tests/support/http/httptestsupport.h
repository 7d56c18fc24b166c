#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace payonce::testsupport {

/// payonce-http-testserver (tests/support/http/httptestserver.cpp) as a child process:
/// started on a free loopback port, optionally under valgrind; stopped with SIGTERM.
class HttpTestServer {
public:
    struct Options {
        QStringList arguments; ///< extra flags (--idle-ms 2000 …)
        bool valgrind = false;
        QString valgrindLog; ///< --log-file for valgrind
    };
    /// Null and *error set when it did not print "listening <port>" in time.
    static std::unique_ptr<HttpTestServer> start(const Options &options, QString *error);
    ~HttpTestServer();

    int port() const { return m_port; }
    qint64 pid() const { return m_process.processId(); }
    bool isRunning() const { return m_process.state() == QProcess::Running; }
    /// SIGTERM, wait; the exit code, or -1 when it did not exit normally in time.
    int terminate(int timeoutMs = 30000);
    /// Everything the server wrote to stdout and stderr so far.
    QString output();

private:
    HttpTestServer() = default;
    QProcess m_process;
    int m_port = 0;
    QByteArray m_output;
};

/// nginx (/usr/sbin/nginx) as a child process in a temporary folder, in front of one
/// upstream on 127.0.0.1:upstreamPort: a self-signed certificate for 127.0.0.1 (openssl),
/// payonce-upstreams.conf and payonce-site.conf written, and the shipped
/// resources/nginx/payonce.conf (sharedConf) included unchanged inside http {}.
class NginxFront {
public:
    /// Null and *error set (with nginx's log) when it did not accept connections in time.
    static std::unique_ptr<NginxFront> start(int upstreamPort, const QString &sharedConf, QString *error);
    /// The same in front of several upstreams (one server line each, as for several agents).
    static std::unique_ptr<NginxFront> start(const QList<int> &upstreamPorts, const QString &sharedConf,
                                             QString *error);
    ~NginxFront();

    int port() const { return m_port; }
    /// The self-signed certificate, to trust as a CA.
    QString certificatePath() const;
    /// nginx's output and error log.
    QByteArray logText();
    /// nginx's access log (the http block's, in its default format).
    QByteArray accessLogText() const;
    /// The temporary folder nginx runs in (its configuration, certificate, logs, pid file);
    /// removed with this object.
    QString folder() const { return m_dir.path(); }
    /// The pid file nginx writes (and removes when it exits).
    QString pidFilePath() const;
    /// The nginx master process.
    qint64 processId() const { return m_process.processId(); }
    /// SIGQUIT (graceful) by the pid file, wait; true when nginx exited and its port is free.
    bool stop(int timeoutMs = 15000);

private:
    NginxFront() = default;
    QTemporaryDir m_dir;
    QProcess m_process;
    int m_port = 0;
};

/// Sends request bytes to 127.0.0.1:port and reads one response (head + Content-Length
/// body) or until the server closes; empty on a connection failure or timeout.
QByteArray httpExchange(int port, const QByteArray &request, int timeoutMs = 10000);
/// httpExchange() over TLS, trusting the certificate in caPath (NginxFront's).
QByteArray httpsExchange(int port, const QString &caPath, const QByteArray &request, int timeoutMs = 10000);
/// httpsExchange() from the loopback address `source` (127.0.0.2, …): a client of its own
/// as far as nginx's $remote_addr is concerned. Empty when source cannot be bound.
QByteArray httpsExchangeFrom(const QHostAddress &source, int port, const QString &caPath, const QByteArray &request,
                             int timeoutMs = 10000);
/// The status code of a raw response ("HTTP/1.1 413 …" → 413), 0 if none.
int httpStatusOf(const QByteArray &response);
/// The value of a header (case-insensitive) in a raw response.
QByteArray httpHeaderOf(const QByteArray &response, const QByteArray &name);
QByteArray httpBodyOf(const QByteArray &response);
/// "VmRSS" / "VmHWM" of a process from /proc/<pid>/status, in KiB; -1 if unreadable.
qint64 procStatusKb(qint64 pid, const char *field);

/// `count` keep-alive connections to 127.0.0.1:port each send one GET /healthz and then
/// stay silent; the server is expected to close each after its idle timeout. Times are in
/// ms: each connection's close measured from its own answer, and the last close measured
/// from when the requests were sent. Runs the calling thread's event loop.
struct IdleCloseMeasurement {
    int answered = 0;         ///< connections that got their 200
    bool allClosed = false;   ///< every connection closed by the server within closeWithinMs
    qint64 firstDelayMs = -1; ///< the quickest answer-to-close
    qint64 lastDelayMs = -1;  ///< the slowest answer-to-close
    qint64 lastCloseMs = -1;  ///< requests sent to the last close
};
IdleCloseMeasurement measureIdleCloses(int port, int count, int closeWithinMs = 30000);

/// Sends `head` (a request head announcing Content-Length: total) and then streams `total`
/// bytes of body — on after the answer too, as a client that does not read would — until
/// the server closes or 60 s pass, sampling the server process's memory (`pid`) as it goes.
struct LargeBodyMeasurement {
    QByteArray response;
    qint64 answeredAfterMs = -1;  ///< when the answer's body was complete
    qint64 sentWhenAnswered = -1; ///< body bytes sent by then
    qint64 sent = 0;              ///< body bytes sent in all
    qint64 elapsedMs = 0;
    qint64 rssBeforeKb = -1, rssAfterKb = -1, rssPeakKb = -1; ///< VmRSS
    qint64 hwmBeforeKb = -1, hwmAfterKb = -1;                 ///< VmHWM
};
LargeBodyMeasurement streamLargeBody(int port, qint64 pid, const QByteArray &head, qint64 total);

} // namespace payonce::testsupport
