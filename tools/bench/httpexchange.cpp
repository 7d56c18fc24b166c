#include "httpexchange.h"

namespace payonce::bench {

QByteArray httpRequest(const QByteArray &method, const QByteArray &target, const QByteArray &extraHeaders,
                       const QByteArray &body)
{
    QByteArray out = method + ' ' + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extraHeaders;
    if (!body.isEmpty() || method == "POST" || method == "PUT")
        out += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += "\r\n" + body;
    return out;
}

} // namespace payonce::bench
