#include "httptestsupport.h"

#include "serverharness.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QTcpSocket>
#include <QThread>

#include <csignal>

namespace payonce::testsupport {

std::unique_ptr<HttpTestServer> HttpTestServer::start(const Options &options, QString *error)
{
    std::unique_ptr<HttpTestServer> server(new HttpTestServer);
    const int port = freeLoopbackPort();
    QStringList args{QStringLiteral("--port"), QString::number(port)};
    args += options.arguments;
    QString program = QStringLiteral(PAYONCE_HTTP_TESTSERVER);
    if (options.valgrind) {
        args.prepend(program);
        args.prepend(QStringLiteral("--log-file=") + options.valgrindLog);
        args.prepend(QStringLiteral("--leak-check=no"));
        args.prepend(QStringLiteral("--error-exitcode=99"));
        program = QStringLiteral("valgrind");
    }
    server->m_process.setProcessChannelMode(QProcess::MergedChannels);
    server->m_process.start(program, args);
    if (!server->m_process.waitForStarted(10000)) {
        *error = QStringLiteral("cannot start %1: %2").arg(program, server->m_process.errorString());
        return nullptr;
    }
    QDeadlineTimer deadline(options.valgrind ? 120000 : 20000);
    while (!deadline.hasExpired()) {
        server->m_process.waitForReadyRead(200);
        server->m_output += server->m_process.readAll();
        // The line "listening <port>" (the log line "listening on host:port" is not it).
        for (const QByteArray &line : server->m_output.split('\n')) {
            bool ok = false;
            const int announced = line.startsWith("listening ") ? line.mid(10).trimmed().toInt(&ok) : 0;
            if (ok && announced > 0) {
                server->m_port = announced;
                return server;
            }
        }
        if (server->m_process.state() != QProcess::Running)
            break;
    }
    *error = QStringLiteral("test server did not start: ") + QString::fromUtf8(server->m_output);
    return nullptr;
}

HttpTestServer::~HttpTestServer()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(10000);
    }
}

int HttpTestServer::terminate(int timeoutMs)
{
    if (m_process.state() == QProcess::NotRunning)
        return -1;
    ::kill(pid_t(m_process.processId()), SIGTERM);
    if (!m_process.waitForFinished(timeoutMs))
        return -1;
    m_output += m_process.readAll();
    if (m_process.exitStatus() != QProcess::NormalExit)
        return -1;
    return m_process.exitCode();
}

QString HttpTestServer::output()
{
    m_output += m_process.readAll();
    return QString::fromUtf8(m_output);
}

QByteArray httpExchange(int port, const QByteArray &request, int timeoutMs)
{
    QTcpSocket socket;
    socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForConnected(timeoutMs))
        return {};
    socket.write(request);
    QByteArray response;
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (socket.bytesAvailable() == 0 && !socket.waitForReadyRead(int(std::max<qint64>(1, deadline.remainingTime())))) {
            response += socket.readAll();
            break; // closed or timed out
        }
        response += socket.readAll();
        const qsizetype headEnd = response.indexOf("\r\n\r\n");
        if (headEnd < 0)
            continue;
        // Skip interim 100 Continue responses.
        if (response.startsWith("HTTP/1.1 100")) {
            response.remove(0, headEnd + 4);
            continue;
        }
        const QByteArray length = httpHeaderOf(response, "content-length");
        if (!length.isNull() && response.size() - (headEnd + 4) >= length.toLongLong())
            break;
    }
    return response;
}

int httpStatusOf(const QByteArray &response)
{
    if (!response.startsWith("HTTP/1."))
        return 0;
    return response.mid(9, 3).toInt();
}

QByteArray httpHeaderOf(const QByteArray &response, const QByteArray &name)
{
    const qsizetype headEnd = response.indexOf("\r\n\r\n");
    const QList<QByteArray> lines = response.left(headEnd < 0 ? response.size() : headEnd).split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines.at(i).indexOf(':');
        if (colon > 0 && lines.at(i).left(colon).trimmed().compare(name, Qt::CaseInsensitive) == 0)
            return lines.at(i).mid(colon + 1).trimmed();
    }
    return {};
}

QByteArray httpBodyOf(const QByteArray &response)
{
    const qsizetype headEnd = response.indexOf("\r\n\r\n");
    return headEnd < 0 ? QByteArray() : response.mid(headEnd + 4);
}

qint64 procStatusKb(qint64 pid, const char *field)
{
    QFile file(QStringLiteral("/proc/%1/status").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray prefix = QByteArray(field) + ':';
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (line.startsWith(prefix))
            return line.mid(prefix.size()).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

} // namespace payonce::testsupport
