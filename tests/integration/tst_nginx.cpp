// resources/nginx/payonce.conf in front of payonce-http-testserver: nginx started as a
// child process in a temporary folder with a self-signed certificate (NginxFront), including
// the shipped file unchanged (only payonce-upstreams.conf and payonce-site.conf are written).
#include "httptestsupport.h"

#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTest>

using namespace payonce::testsupport;

class TestNginx : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void proxiesToTheAgent();
};

void TestNginx::proxiesToTheAgent()
{
    QString error;
    auto agent = HttpTestServer::start({}, &error);
    QVERIFY2(agent, qPrintable(error));

    QString folderPath;
    {
        auto nginx = NginxFront::start(agent->port(),
                                       QStringLiteral(PAYONCE_SOURCE_DIR "/resources/nginx/payonce.conf"), &error);
        QVERIFY2(nginx, qPrintable(error));
        folderPath = nginx->folder();
        const int nginxPort = nginx->port();

        QNetworkAccessManager network;
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setCaCertificates(QSslCertificate::fromPath(nginx->certificatePath()));
        const QString base = QStringLiteral("https://127.0.0.1:%1").arg(nginxPort);

        QNetworkRequest health{QUrl(base + QStringLiteral("/healthz"))};
        health.setSslConfiguration(tls);
        std::unique_ptr<QNetworkReply> healthReply(network.get(health));
        QTRY_VERIFY_WITH_TIMEOUT(healthReply->isFinished(), 15000);
        QVERIFY2(healthReply->error() == QNetworkReply::NoError,
                 qPrintable(healthReply->errorString() + QString::fromUtf8(nginx->logText())));
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
        const QString pidFile = nginx->pidFilePath();
        QFile pid(pidFile);
        QVERIFY(pid.open(QIODevice::ReadOnly));
        const qint64 nginxPid = pid.readAll().trimmed().toLongLong();
        pid.close();
        QCOMPARE(nginxPid, nginx->processId());
        QVERIFY2(nginx->stop(), nginx->logText().constData()); // SIGQUIT, exited within 15 s, its port closed
        QVERIFY(!QFile::exists(pidFile));
    }
    QVERIFY(!QFile::exists(folderPath));
    QCOMPARE(agent->terminate(), 0);
}

QTEST_GUILESS_MAIN(TestNginx)
#include "tst_nginx.moc"
