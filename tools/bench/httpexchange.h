#pragma once

#include <QByteArray>
#include <QString>

#include <memory>
#include <optional>

namespace payonce::bench {

/// One HTTP answer as the load client read it off a keep-alive connection.
struct HttpReply {
    int status = 0;
    QByteArray layer; ///< X-Payonce-Layer, empty when absent
    QByteArray body;
};

/// What an operation does after a reply: send its next request on the same connection,
/// end (its latency is the time since its first request went out), or fail with a message
/// the report prints.
struct ExchangeStep {
    enum class Kind {
        Next,
        Done,
        Failed
    } kind = Kind::Done;
    QByteArray request; ///< Next: the complete request bytes
    QString failure;    ///< Failed: what went wrong

    static ExchangeStep next(QByteArray request) { return {Kind::Next, std::move(request), {}}; }
    static ExchangeStep done() { return {}; }
    static ExchangeStep failed(QString failure) { return {Kind::Failed, {}, std::move(failure)}; }
};

/// One measured operation: one or more requests in sequence on one connection (a
/// token then its confirm). Used by one load-client thread at a time.
class Exchange {
public:
    virtual ~Exchange() = default;
    virtual QByteArray firstRequest() = 0;
    virtual ExchangeStep onReply(const HttpReply &reply) = 0;
};

/// Hands out the operations of a phase. next() is called from every load-client thread:
/// it must be thread-safe; an empty pointer means the phase has no more work.
class Workload {
public:
    virtual ~Workload() = default;
    virtual std::unique_ptr<Exchange> next() = 0;
};

/// A request line, Host, the given extra header lines ("Name: value\r\n" each) and a
/// JSON body with its Content-Length; keep-alive is HTTP/1.1's default.
QByteArray httpRequest(const QByteArray &method, const QByteArray &target, const QByteArray &extraHeaders,
                       const QByteArray &body = {});

} // namespace payonce::bench
