#include "httptestsupport.h"

#include "serverharness.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpSocket>
#include <QThread>

#include <algorithm>
#include <csignal>
#include <memory>
#include <vector>

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

namespace {

bool writeWholeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(content) == content.size();
}

} // namespace

std::unique_ptr<NginxFront> NginxFront::start(int upstreamPort, const QString &sharedConf, QString *error)
{
    return start(QList<int>{upstreamPort}, sharedConf, error);
}

std::unique_ptr<NginxFront> NginxFront::start(const QList<int> &upstreamPorts, const QString &sharedConf,
                                              QString *error)
{
    std::unique_ptr<NginxFront> front(new NginxFront);
    if (!front->m_dir.isValid()) {
        *error = QStringLiteral("no temporary folder for nginx");
        return nullptr;
    }
    const QString dir = front->m_dir.path();
    QProcess openssl;
    openssl.setProcessChannelMode(QProcess::MergedChannels);
    openssl.start(QStringLiteral("openssl"),
                  {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                   QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-days"), QStringLiteral("1"),
                   QStringLiteral("-subj"), QStringLiteral("/CN=127.0.0.1"), QStringLiteral("-addext"),
                   QStringLiteral("subjectAltName=IP:127.0.0.1,DNS:localhost"), QStringLiteral("-keyout"),
                   dir + QStringLiteral("/key.pem"), QStringLiteral("-out"), dir + QStringLiteral("/cert.pem")});
    if (!openssl.waitForFinished(60000) || openssl.exitCode() != 0) {
        *error = QStringLiteral("openssl req failed: ") + QString::fromUtf8(openssl.readAll());
        return nullptr;
    }
    front->m_port = freeLoopbackPort();
    const QByteArray d = dir.toUtf8();
    QByteArray upstreams;
    for (const int port : upstreamPorts)
        upstreams += "server 127.0.0.1:" + QByteArray::number(port) + " max_fails=3 fail_timeout=10s;\n";
    const bool written = writeWholeFile(dir + QStringLiteral("/payonce-upstreams.conf"), upstreams)
                         && writeWholeFile(dir + QStringLiteral("/payonce-site.conf"),
                                           "listen 127.0.0.1:" + QByteArray::number(front->m_port)
                                               + " ssl;\nserver_name localhost;\n"
                                                 "ssl_certificate "
                                               + d + "/cert.pem;\nssl_certificate_key " + d + "/key.pem;\n")
                         && writeWholeFile(dir + QStringLiteral("/nginx.conf"),
                                           "user root root;\nworker_processes 1;\nerror_log " + d
                                               + "/error.log info;\n"
                                                 "events { worker_connections 1024; }\n"
                                                 "http {\n"
                                                 "  access_log "
                                               + d
                                               + "/access.log;\n"
                                                 "  client_body_temp_path "
                                               + d + "/client_body;\n  proxy_temp_path " + d
                                               + "/proxy;\n"
                                                 "  fastcgi_temp_path "
                                               + d + "/fastcgi;\n  uwsgi_temp_path " + d
                                               + "/uwsgi;\n"
                                                 "  scgi_temp_path "
                                               + d
                                               + "/scgi;\n"
                                                 "  include "
                                               + sharedConf.toUtf8()
                                               + ";\n"
                                                 "}\n");
    if (!written) {
        *error = QStringLiteral("cannot write nginx's configuration in ") + dir;
        return nullptr;
    }
    front->m_process.setProcessChannelMode(QProcess::MergedChannels);
    front->m_process.start(QStringLiteral("/usr/sbin/nginx"),
                           {QStringLiteral("-p"), dir, QStringLiteral("-c"), dir + QStringLiteral("/nginx.conf"),
                            QStringLiteral("-g"), QStringLiteral("daemon off; pid %1/nginx.pid;").arg(dir)});
    if (!front->m_process.waitForStarted(10000)) {
        *error = QStringLiteral("cannot start nginx: ") + front->m_process.errorString();
        return nullptr;
    }
    for (int i = 0; i < 50 && front->m_process.state() == QProcess::Running; ++i) {
        if (loopbackPortAcceptsConnections(front->m_port))
            return front;
        QThread::msleep(100);
    }
    *error = QStringLiteral("nginx did not start: ") + QString::fromUtf8(front->logText());
    return nullptr;
}

NginxFront::~NginxFront()
{
    if (m_process.state() != QProcess::NotRunning && !stop()) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

QString NginxFront::certificatePath() const
{
    return m_dir.path() + QStringLiteral("/cert.pem");
}

QString NginxFront::pidFilePath() const
{
    return m_dir.path() + QStringLiteral("/nginx.pid");
}

QByteArray NginxFront::logText()
{
    QFile errorLog(m_dir.path() + QStringLiteral("/error.log"));
    QByteArray text = m_process.readAll();
    if (errorLog.open(QIODevice::ReadOnly))
        text += errorLog.readAll();
    return text;
}

QByteArray NginxFront::accessLogText() const
{
    QFile accessLog(m_dir.path() + QStringLiteral("/access.log"));
    return accessLog.open(QIODevice::ReadOnly) ? accessLog.readAll() : QByteArray();
}

bool NginxFront::stop(int timeoutMs)
{
    if (m_process.state() == QProcess::NotRunning)
        return true;
    QFile pidFile(pidFilePath());
    const pid_t pid = pidFile.open(QIODevice::ReadOnly) ? pid_t(pidFile.readAll().trimmed().toLongLong())
                                                        : pid_t(m_process.processId());
    if (pid <= 0 || ::kill(pid, SIGQUIT) != 0 || !m_process.waitForFinished(timeoutMs))
        return false;
    return !loopbackPortAcceptsConnections(m_port);
}

namespace {
// One response (head + Content-Length body, interim 100 Continue skipped) or what came
// until the peer closed or the time ran out.
QByteArray readOneResponse(QTcpSocket &socket, int timeoutMs)
{
    QByteArray response;
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (socket.bytesAvailable() == 0
            && !socket.waitForReadyRead(int(std::max<qint64>(1, deadline.remainingTime())))) {
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
} // namespace

QByteArray httpExchange(int port, const QByteArray &request, int timeoutMs)
{
    QTcpSocket socket;
    socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForConnected(timeoutMs))
        return {};
    socket.write(request);
    return readOneResponse(socket, timeoutMs);
}

QByteArray httpsExchange(int port, const QString &caPath, const QByteArray &request, int timeoutMs)
{
    return httpsExchangeFrom(QHostAddress(), port, caPath, request, timeoutMs);
}

QByteArray httpsExchangeFrom(const QHostAddress &source, int port, const QString &caPath, const QByteArray &request,
                             int timeoutMs)
{
    QSslSocket socket;
    if (!source.isNull() && !socket.bind(source))
        return {};
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setCaCertificates(QSslCertificate::fromPath(caPath));
    socket.setSslConfiguration(tls);
    socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForEncrypted(timeoutMs))
        return {};
    socket.write(request);
    return readOneResponse(socket, timeoutMs);
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

IdleCloseMeasurement measureIdleCloses(int port, int count, int closeWithinMs)
{
    IdleCloseMeasurement result;
    std::vector<std::unique_ptr<QTcpSocket>> clients;
    for (int i = 0; i < count; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QStringLiteral("127.0.0.1"), quint16(port));
        clients.push_back(std::move(socket));
    }
    for (auto &socket : clients) {
        if (socket->state() != QAbstractSocket::ConnectedState && !socket->waitForConnected(10000))
            return result;
    }
    QElapsedTimer timer;
    std::vector<qint64> closedAt(size_t(count), -1);
    std::vector<qint64> answeredAt(size_t(count), -1);
    timer.start();
    for (int i = 0; i < count; ++i) {
        QObject::connect(clients[size_t(i)].get(), &QTcpSocket::disconnected, clients[size_t(i)].get(),
                         [&closedAt, &timer, i] { closedAt[size_t(i)] = timer.elapsed(); });
    }
    for (auto &socket : clients)
        socket->write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    auto spin = [] {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        QThread::msleep(5);
    };
    while (result.answered < count && timer.elapsed() < 20000) {
        spin();
        result.answered = 0;
        for (int i = 0; i < count; ++i) {
            if (answeredAt[size_t(i)] < 0 && clients[size_t(i)]->peek(64).startsWith("HTTP/1.1 200"))
                answeredAt[size_t(i)] = timer.elapsed();
            result.answered += answeredAt[size_t(i)] >= 0 ? 1 : 0;
        }
    }
    auto allGone = [&] {
        return std::all_of(clients.begin(), clients.end(),
                           [](const auto &s) { return s->state() == QAbstractSocket::UnconnectedState; });
    };
    while (!allGone() && timer.elapsed() < closeWithinMs)
        spin();
    result.allClosed = allGone();
    if (result.answered != count || !result.allClosed)
        return result;
    std::vector<qint64> delays;
    for (int i = 0; i < count; ++i)
        delays.push_back(closedAt[size_t(i)] - answeredAt[size_t(i)]);
    const auto [first, last] = std::minmax_element(delays.begin(), delays.end());
    result.firstDelayMs = *first;
    result.lastDelayMs = *last;
    result.lastCloseMs = *std::max_element(closedAt.begin(), closedAt.end());
    return result;
}

LargeBodyMeasurement streamLargeBody(int port, qint64 pid, const QByteArray &head, qint64 total)
{
    LargeBodyMeasurement m;
    m.rssBeforeKb = m.rssPeakKb = procStatusKb(pid, "VmRSS");
    m.hwmBeforeKb = procStatusKb(pid, "VmHWM");
    QTcpSocket socket;
    socket.connectToHost(QStringLiteral("127.0.0.1"), quint16(port));
    if (!socket.waitForConnected(5000))
        return m;
    socket.write(head);
    const QByteArray chunk(256 * 1024, 'x');
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 60000 && socket.state() == QAbstractSocket::ConnectedState) {
        if (m.sent < total && socket.bytesToWrite() < 2 * chunk.size()) {
            socket.write(chunk);
            m.sent += chunk.size();
        }
        socket.waitForBytesWritten(5);
        m.response += socket.readAll();
        if (m.answeredAfterMs < 0 && m.response.contains("}}")) {
            m.answeredAfterMs = timer.elapsed();
            m.sentWhenAnswered = m.sent;
        }
        m.rssPeakKb = std::max(m.rssPeakKb, procStatusKb(pid, "VmRSS"));
        if (m.sent >= total)
            socket.waitForReadyRead(100);
    }
    m.response += socket.readAll();
    m.elapsedMs = timer.elapsed();
    m.rssAfterKb = procStatusKb(pid, "VmRSS");
    m.hwmAfterKb = procStatusKb(pid, "VmHWM");
    return m;
}

} // namespace payonce::testsupport
