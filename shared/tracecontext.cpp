#include "tracecontext.h"

#include <QList>
#include <QRandomGenerator>

#include <algorithm>
#include <cstring>

namespace payonce {

namespace {

bool isLowerHex(QByteArrayView text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
}

bool isAllZeros(QByteArrayView text)
{
    return std::all_of(text.begin(), text.end(), [](char c) { return c == '0'; });
}

bool isTraceId(QByteArrayView text)
{
    return text.size() == 32 && isLowerHex(text) && !isAllZeros(text);
}

} // namespace

std::optional<TraceContext> TraceContext::parse(QByteArrayView traceparent)
{
    const QList<QByteArray> parts = traceparent.toByteArray().trimmed().split('-');
    if (parts.size() < 4)
        return std::nullopt;
    const QByteArray &version = parts.at(0);
    const QByteArray &traceId = parts.at(1);
    const QByteArray &parentId = parts.at(2);
    const QByteArray &flags = parts.at(3);
    // Version 00 has exactly four fields; a later one may append more.
    if (version.size() != 2 || !isLowerHex(version) || version == "ff" || (version == "00" && parts.size() != 4))
        return std::nullopt;
    if (!isTraceId(traceId) || parentId.size() != 16 || !isLowerHex(parentId) || isAllZeros(parentId)
        || flags.size() != 2 || !isLowerHex(flags))
        return std::nullopt;
    return TraceContext{QString::fromLatin1(traceId), QString::fromLatin1(parentId), QString::fromLatin1(flags)};
}

TraceContext TraceContext::fresh()
{
    return TraceContext{randomTraceHex(16), randomTraceHex(8), QStringLiteral("01")};
}

TraceContext TraceContext::child() const
{
    return TraceContext{traceId, randomTraceHex(8), flags};
}

QByteArray TraceContext::header() const
{
    return "00-" + traceId.toLatin1() + '-' + parentId.toLatin1() + '-' + flags.toLatin1();
}

QString randomTraceHex(int bytes)
{
    // Ids, not secrets: a generator of this thread's own, seeded once from the system's, so
    // a request's two ids cost no system call and no lock.
    thread_local QRandomGenerator64 generator(QRandomGenerator::system()->generate64());
    QByteArray raw(bytes, '\0');
    do {
        for (qsizetype i = 0; i < raw.size(); i += 8) {
            const quint64 word = generator.generate64();
            std::memcpy(raw.data() + i, &word, size_t(std::min<qsizetype>(8, raw.size() - i)));
        }
    } while (isAllZeros(raw.toHex()));
    return QString::fromLatin1(raw.toHex());
}

QByteArray traceParentFor(const QString &traceId)
{
    if (!isTraceId(traceId.toLatin1()))
        return {};
    return TraceContext{traceId, randomTraceHex(8), QStringLiteral("01")}.header();
}

} // namespace payonce
