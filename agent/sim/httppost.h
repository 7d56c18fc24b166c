#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrl>

#include <functional>

class QObject;

namespace payonce::sim {

/// One notification POST as sent on the wire: kept so that a replay can send the very same
/// bytes again.
struct OutgoingPost {
    QUrl url;
    QList<QPair<QByteArray, QByteArray>> headers; ///< besides Host, Content-Length, Connection
    QByteArray body;
};

struct PostResult {
    enum class Outcome {
        Completed,
        TimedOut,
        Failed
    };
    Outcome outcome = Outcome::Failed;
    int status = 0;  ///< when Completed
    QByteArray body; ///< when Completed
    QString error;   ///< when TimedOut / Failed
};

/// Sends post over its own TCP connection (HTTP/1.1, Connection: close; http:// only) and
/// calls done once with the result, on the caller's thread, from the event loop. Every
/// call opens its own connection, so N calls are N concurrent requests (a
/// QNetworkAccessManager would queue them six per host). The socket is a child of context:
/// destroying context aborts the exchange and done is never called. The answer is complete
/// at Content-Length, at the last chunk of a chunked body, or when the peer closes.
void postHttp(QObject *context, const OutgoingPost &post, int timeoutMs, std::function<void(const PostResult &)> done);

} // namespace payonce::sim
