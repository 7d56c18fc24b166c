#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

#include <optional>

namespace payonce::testsupport {

/// One HTTP/1.1 request as a test's stand-in server (NotificationRelay, WebhookReceiver, a
/// suite's own) read it off its socket.
struct ReceivedRequest {
    QByteArray method;
    QByteArray path;
    QList<QPair<QByteArray, QByteArray>> headers; ///< as sent, in order
    QByteArray body;
};

/// Takes one whole request — its head, then the body its Content-Length announces — off the
/// front of `buffer` (what a connection has sent so far); nullopt, leaving `buffer` as it
/// is, while the request is not complete yet.
std::optional<ReceivedRequest> takeRequest(QByteArray &buffer);

} // namespace payonce::testsupport
