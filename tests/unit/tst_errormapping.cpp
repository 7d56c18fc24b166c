// errormapping.cpp is the one place that knows error statuses: every core::ErrorCode and
// every contract code (docs/openapi.yaml) maps to the contract's status.
#include "http/errormapping.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using payonce::core::ErrorCode;
namespace http = payonce::http;

class TestErrorMapping : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void coreCodes_data();
    void coreCodes();
    void apiCodes_data();
    void apiCodes();
    void errorBodyShape();
    void transientErrorsCarryRetryAfter();
    void rawResponseIsComplete();
};

void TestErrorMapping::coreCodes_data()
{
    QTest::addColumn<ErrorCode>("code");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("apiCode");
    QTest::newRow("InvalidInput") << ErrorCode::InvalidInput << 400 << QStringLiteral("invalid_request");
    QTest::newRow("NotFound") << ErrorCode::NotFound << 404 << QStringLiteral("not_found");
    QTest::newRow("Duplicate") << ErrorCode::Duplicate << 409 << QStringLiteral("duplicate_request");
    QTest::newRow("Conflict") << ErrorCode::Conflict << 409 << QStringLiteral("conflict");
    QTest::newRow("StaleFence") << ErrorCode::StaleFence << 409 << QStringLiteral("stale_fence");
    QTest::newRow("Busy") << ErrorCode::Busy << 409 << QStringLiteral("request_in_progress");
    QTest::newRow("Unavailable") << ErrorCode::Unavailable << 503 << QStringLiteral("unavailable");
    QTest::newRow("Unauthenticated") << ErrorCode::Unauthenticated << 401 << QStringLiteral("unauthenticated");
    QTest::newRow("Forbidden") << ErrorCode::Forbidden << 403 << QStringLiteral("forbidden");
    QTest::newRow("FourEyes") << ErrorCode::FourEyes << 403 << QStringLiteral("four_eyes");
    QTest::newRow("BadSignature") << ErrorCode::BadSignature << 401 << QStringLiteral("bad_signature");
    QTest::newRow("Misconfigured") << ErrorCode::Misconfigured << 500 << QStringLiteral("internal");
    QTest::newRow("SchemaTooNew") << ErrorCode::SchemaTooNew << 500 << QStringLiteral("internal");
    QTest::newRow("Internal") << ErrorCode::Internal << 500 << QStringLiteral("internal");
}

void TestErrorMapping::coreCodes()
{
    QFETCH(ErrorCode, code);
    QFETCH(int, status);
    QFETCH(QString, apiCode);
    QCOMPARE(http::httpStatus(code), status);
    QCOMPARE(http::apiErrorCode(code), apiCode);
    QVERIFY(http::isKnownApiErrorCode(apiCode));
    const auto reply = http::errorReply(
        payonce::core::Error::make(code, QStringLiteral("internal detail"), QStringLiteral("public text")));
    QCOMPARE(reply.status, status);
    QVERIFY(!reply.body.contains("internal detail"));
}

void TestErrorMapping::apiCodes_data()
{
    QTest::addColumn<QString>("code");
    QTest::addColumn<int>("status");
    // docs/openapi.yaml, "Common errors", "Paying", "Operations", and this layer's additions.
    const std::pair<const char *, int> rows[] = {
        {"invalid_request", 400},
        {"payload_too_large", 413},
        {"invalid_amount", 400},
        {"order_not_found", 404},
        {"order_not_yours", 403},
        {"invalid_user", 400},
        {"order_exists", 409},
        {"idempotency_key_reused", 422},
        {"request_in_progress", 409},
        {"idempotency_key_missing", 400},
        {"invalid_idempotency_key", 400},
        {"duplicate_request", 409},
        {"order_state_conflict", 409},
        {"gateway_unavailable", 503},
        {"unauthenticated", 401},
        {"forbidden", 403},
        {"four_eyes", 403},
        {"length_required", 411},
        {"too_many_requests", 429},
        {"too_many_connections", 503},
        {"not_found", 404},
        {"method_not_allowed", 405},
        {"header_too_large", 431},
        {"internal", 500},
        {"sku_not_found", 404},
    };
    for (const auto &[code, status] : rows)
        QTest::newRow(code) << QString::fromLatin1(code) << status;
}

void TestErrorMapping::apiCodes()
{
    QFETCH(QString, code);
    QFETCH(int, status);
    QVERIFY(http::isKnownApiErrorCode(code));
    QCOMPARE(http::httpStatus(code), status);
    QCOMPARE(http::errorReply(code, QStringLiteral("m")).status, status);
}

void TestErrorMapping::errorBodyShape()
{
    const QJsonObject body = QJsonDocument::fromJson(http::errorBody(QStringLiteral("invalid_request"),
                                                                     QStringLiteral("missing field \"order_no\"")))
                                 .object();
    QCOMPARE(body.keys(), QStringList{QStringLiteral("error")});
    const QJsonObject error = body.value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("invalid_request"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(), QStringLiteral("missing field \"order_no\""));
}

void TestErrorMapping::transientErrorsCarryRetryAfter()
{
    QCOMPARE(http::errorReply(payonce::core::Error::make(ErrorCode::Busy, QStringLiteral("x"))).header("retry-after"),
             QByteArray("1"));
    QVERIFY(http::errorReply(payonce::core::Error::make(ErrorCode::NotFound, QStringLiteral("x")))
                .header("retry-after")
                .isNull());
}

void TestErrorMapping::rawResponseIsComplete()
{
    const QByteArray raw = http::rawErrorResponse(QStringLiteral("payload_too_large"), QStringLiteral("too big"));
    QVERIFY(raw.startsWith("HTTP/1.1 413 Payload Too Large\r\n"));
    QVERIFY(raw.contains("Connection: close\r\n"));
    const QByteArray body = raw.mid(raw.indexOf("\r\n\r\n") + 4);
    QVERIFY(raw.contains(QByteArray("Content-Length: " + QByteArray::number(body.size()) + "\r\n")));
    QVERIFY(body.contains("\"code\":\"payload_too_large\""));
}

QTEST_GUILESS_MAIN(TestErrorMapping)
#include "tst_errormapping.moc"
