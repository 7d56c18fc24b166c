// resources/nginx/payonce.conf in front of payonce-http-testserver: nginx started as a
// child process in a temporary folder with a self-signed certificate, including the
// shipped file unchanged (only payonce-upstreams.conf and payonce-site.conf are written).
#include "httptestsupport.h"

#include "serverharness.h"

#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace payonce::testsupport;

class TestNginx : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void proxiesToTheAgent();
};

namespace {

bool writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(content) == content.size();
}

} // namespace

void TestNginx::proxiesToTheAgent()
{
    QString error;
    auto agent = HttpTestServer::start({}, &error);
    QVERIFY2(agent, qPrintable(error));

    QString folderPath;
    {
        QTemporaryDir folder;
        QVERIFY(folder.isValid());
        folderPath = folder.path();
        const QString dir = folder.path();

        QProcess openssl;
        openssl.setProcessChannelMode(QProcess::MergedChannels);
        openssl.start(QStringLiteral("openssl"),
                      {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                       QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-days"),
                       QStringLiteral("1"), QStringLiteral("-subj"), QStringLiteral("/CN=127.0.0.1"),
                       QStringLiteral("-addext"), QStringLiteral("subjectAltName=IP:127.0.0.1,DNS:localhost"),
                       QStringLiteral("-keyout"), dir + QStringLiteral("/key.pem"), QStringLiteral("-out"),
                       dir + QStringLiteral("/cert.pem")});
        QVERIFY(openssl.waitForFinished(60000));
        QVERIFY2(openssl.exitCode() == 0, openssl.readAll().constData());

        const int nginxPort = freeLoopbackPort();
        const QByteArray d = dir.toUtf8();
        QVERIFY(
            writeFile(dir + QStringLiteral("/payonce-upstreams.conf"),
                      "server 127.0.0.1:" + QByteArray::number(agent->port()) + " max_fails=3 fail_timeout=10s;\n"));
        QVERIFY(writeFile(dir + QStringLiteral("/payonce-site.conf"),
                          "listen 127.0.0.1:" + QByteArray::number(nginxPort)
                              + " ssl;\nserver_name localhost;\n"
                                "ssl_certificate "
                              + d + "/cert.pem;\nssl_certificate_key " + d + "/key.pem;\n"));
        QVERIFY(writeFile(dir + QStringLiteral("/nginx.conf"), "user root root;\nworker_processes 1;\nerror_log " + d
                                                                   + "/error.log info;\n"
                                                                     "events { worker_connections 256; }\n"
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
                                                                     "  include " PAYONCE_SOURCE_DIR
                                                                     "/resources/nginx/payonce.conf;\n"
                                                                     "}\n"));

        const QString pidFile = dir + QStringLiteral("/nginx.pid");
        QProcess nginx;
        nginx.setProcessChannelMode(QProcess::MergedChannels);
        nginx.start(QStringLiteral("/usr/sbin/nginx"),
                    {QStringLiteral("-p"), dir, QStringLiteral("-c"), dir + QStringLiteral("/nginx.conf"),
                     QStringLiteral("-g"), QStringLiteral("daemon off; pid %1;").arg(pidFile)});
        QVERIFY(nginx.waitForStarted(10000));
        bool up = false;
        for (int i = 0; i < 50 && !up && nginx.state() == QProcess::Running; ++i) {
            up = loopbackPortAcceptsConnections(nginxPort);
            if (!up)
                QTest::qWait(100);
        }
        QFile errorLog(dir + QStringLiteral("/error.log"));
        const auto logText = [&] {
            errorLog.open(QIODevice::ReadOnly);
            const QByteArray text = nginx.readAll() + errorLog.readAll();
            errorLog.close();
            return text;
        };
        QVERIFY2(up, logText().constData());

        QNetworkAccessManager network;
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setCaCertificates(QSslCertificate::fromPath(dir + QStringLiteral("/cert.pem")));
        const QString base = QStringLiteral("https://127.0.0.1:%1").arg(nginxPort);

        QNetworkRequest health{QUrl(base + QStringLiteral("/healthz"))};
        health.setSslConfiguration(tls);
        std::unique_ptr<QNetworkReply> healthReply(network.get(health));
        QTRY_VERIFY_WITH_TIMEOUT(healthReply->isFinished(), 15000);
        QVERIFY2(healthReply->error() == QNetworkReply::NoError,
                 qPrintable(healthReply->errorString() + QString::fromUtf8(logText())));
        QCOMPARE(healthReply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
        QCOMPARE(healthReply->readAll(), QByteArray("{\"status\":\"up\"}"));
        QVERIFY(healthReply->hasRawHeader("X-Trace-Id")); // from the agent

        QNetworkRequest echo{QUrl(base + QStringLiteral("/echo"))};
        echo.setSslConfiguration(tls);
        echo.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        const QByteArray big = "{\"a\":\"" + QByteArray(100 * 1024, 'x') + "\"}";
        std::unique_ptr<QNetworkReply> bigReply(network.post(echo, big));
        QTRY_VERIFY_WITH_TIMEOUT(bigReply->isFinished(), 15000);
        QCOMPARE(bigReply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 413);

        std::unique_ptr<QNetworkReply> smallReply(network.post(echo, QByteArray("{\"a\":1}")));
        QTRY_VERIFY_WITH_TIMEOUT(smallReply->isFinished(), 15000);
        QCOMPARE(smallReply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);

        // Stop nginx by its pid file.
        QFile pid(pidFile);
        QVERIFY(pid.open(QIODevice::ReadOnly));
        const pid_t nginxPid = pid_t(pid.readAll().trimmed().toLongLong());
        pid.close();
        QCOMPARE(qint64(nginxPid), nginx.processId());
        QCOMPARE(::kill(nginxPid, SIGQUIT), 0);
        QVERIFY(nginx.waitForFinished(15000));
        QVERIFY(!QFile::exists(pidFile));
        QVERIFY(!loopbackPortAcceptsConnections(nginxPort));
    }
    QVERIFY(!QFile::exists(folderPath));
    QCOMPARE(agent->terminate(), 0);
}

QTEST_GUILESS_MAIN(TestNginx)
#include "tst_nginx.moc"
