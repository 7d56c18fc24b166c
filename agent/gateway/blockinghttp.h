#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QUrl>

namespace payonce::gateway {

/// One HTTP exchange, performed synchronously on the calling thread.
struct HttpRequest {
    QByteArray method = "GET";
    QUrl url;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    int timeoutMs = 10000; ///< the whole exchange, connect to last byte
};

struct HttpResponse {
    enum class Outcome {
        Completed,
        TimedOut,
        Failed
    };
    Outcome outcome = Outcome::Failed;
    int status = 0; ///< HTTP status when Completed
    QByteArray body;
    QList<QPair<QByteArray, QByteArray>> headers;
    QString errorText; ///< for TimedOut / Failed, for the log

    /// Case-insensitive header lookup; empty when absent.
    QByteArray header(QByteArrayView name) const;
};

/// Sends request and waits for the answer, blocking the calling thread (a worker of the
/// agent's pool, or a test's main thread) for at most request.timeoutMs.
///
/// Why blocking, and how: the PaymentGateway port is synchronous on pool threads. A
/// QNetworkAccessManager and a QEventLoop are created for the call in the calling thread
/// and gone when it returns, so no QObject crosses threads and any number of threads may
/// call at once. An HTTP status >= 400 is still Completed (the caller maps it); TimedOut
/// means nothing complete arrived within the deadline (the request was aborted); Failed is
/// any transport error (refused, reset, DNS, TLS). Redirects are not followed.
HttpResponse sendBlocking(const HttpRequest &request);

} // namespace payonce::gateway
