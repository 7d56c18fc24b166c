#include "streammessage.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace payonce {

namespace {

constexpr auto kTimeFormat = "yyyy-MM-ddTHH:mm:ss.zzz";

QJsonObject layerObject(const auto &byLayer)
{
    QJsonObject out;
    for (Layer layer : allLayers)
        out.insert(layerName(layer), double(byLayer.value(layer)));
    return out;
}

void putMetrics(QJsonObject &out, const StreamMetrics &m)
{
    out.insert(QStringLiteral("duplicates"), layerObject(m.duplicates));
    out.insert(QStringLiteral("rates"), layerObject(m.rates));
    out.insert(QStringLiteral("requests"), double(m.requests));
    out.insert(QStringLiteral("latency_ms"),
               QJsonObject{{QStringLiteral("p50"), m.latencyP50Ms}, {QStringLiteral("p99"), m.latencyP99Ms}});
    QJsonObject states;
    for (auto it = m.breakerStates.cbegin(); it != m.breakerStates.cend(); ++it)
        states.insert(it.key(), it.value());
    out.insert(QStringLiteral("breaker_states"), states);
    out.insert(QStringLiteral("redis_degraded"), m.redisDegraded);
    if (m.outboxPending)
        out.insert(QStringLiteral("outbox_pending"), double(*m.outboxPending));
    if (m.outboxDead)
        out.insert(QStringLiteral("outbox_dead"), double(*m.outboxDead));
}

/// Reads fields and remembers the first thing wrong.
class Reader {
public:
    QString error;

    bool fail(const QString &why)
    {
        if (error.isEmpty())
            error = why;
        return false;
    }
    QJsonValue field(const QJsonObject &o, const QString &name)
    {
        const QJsonValue v = o.value(name);
        if (v.isUndefined())
            fail(QStringLiteral("missing field %1").arg(name));
        return v;
    }
    QString string(const QJsonObject &o, const QString &name)
    {
        const QJsonValue v = field(o, name);
        if (!v.isUndefined() && !v.isString())
            fail(QStringLiteral("%1 must be a string").arg(name));
        return v.toString();
    }
    double number(const QJsonValue &v, const QString &name)
    {
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < 0) {
            fail(QStringLiteral("%1 must be a non-negative number").arg(name));
            return 0;
        }
        return v.toDouble();
    }
    qint64 count(const QJsonValue &v, const QString &name)
    {
        const double d = number(v, name);
        if (error.isEmpty() && (d != std::floor(d) || d > 9007199254740992.0))
            fail(QStringLiteral("%1 must be a whole number").arg(name));
        return qint64(d);
    }
    /// A count the sender leaves out while it does not know it.
    std::optional<qint64> optionalCount(const QJsonObject &o, const QString &name)
    {
        const QJsonValue v = o.value(name);
        if (v.isUndefined())
            return std::nullopt;
        return count(v, name);
    }
    QJsonObject object(const QJsonObject &o, const QString &name)
    {
        const QJsonValue v = field(o, name);
        if (!v.isUndefined() && !v.isObject())
            fail(QStringLiteral("%1 must be an object").arg(name));
        return v.toObject();
    }
    template <typename T, typename Convert>
    QMap<Layer, T> byLayer(const QJsonObject &o, const QString &name, Convert convert)
    {
        QMap<Layer, T> out;
        const QJsonObject layers = object(o, name);
        for (auto it = layers.begin(); it != layers.end(); ++it) {
            const auto layer = layerFromName(it.key());
            if (!layer) {
                fail(QStringLiteral("%1: unknown layer %2").arg(name, it.key()));
                continue;
            }
            out.insert(*layer, convert(it.value(), name + u'.' + it.key()));
        }
        for (Layer layer : allLayers) {
            if (!out.contains(layer))
                fail(QStringLiteral("%1: missing layer %2").arg(name, layerName(layer)));
        }
        return out;
    }

    StreamMetrics metrics(const QJsonObject &o)
    {
        StreamMetrics m;
        m.duplicates = byLayer<qint64>(o, QStringLiteral("duplicates"),
                                       [this](const QJsonValue &v, const QString &n) { return count(v, n); });
        m.rates = byLayer<double>(o, QStringLiteral("rates"),
                                  [this](const QJsonValue &v, const QString &n) { return number(v, n); });
        m.requests = count(field(o, QStringLiteral("requests")), QStringLiteral("requests"));
        const QJsonObject latency = object(o, QStringLiteral("latency_ms"));
        m.latencyP50Ms = number(field(latency, QStringLiteral("p50")), QStringLiteral("latency_ms.p50"));
        m.latencyP99Ms = number(field(latency, QStringLiteral("p99")), QStringLiteral("latency_ms.p99"));
        const QJsonObject states = object(o, QStringLiteral("breaker_states"));
        for (auto it = states.begin(); it != states.end(); ++it) {
            if (!it.value().isString())
                fail(QStringLiteral("breaker_states.%1 must be a string").arg(it.key()));
            m.breakerStates.insert(it.key(), it.value().toString());
        }
        const QJsonValue degraded = field(o, QStringLiteral("redis_degraded"));
        if (!degraded.isUndefined() && !degraded.isBool())
            fail(QStringLiteral("redis_degraded must be a boolean"));
        m.redisDegraded = degraded.toBool();
        m.outboxPending = optionalCount(o, QStringLiteral("outbox_pending"));
        m.outboxDead = optionalCount(o, QStringLiteral("outbox_dead"));
        return m;
    }
};

} // namespace

QString streamTime(const QDateTime &at)
{
    return at.toUTC().toString(QLatin1String(kTimeFormat)) + u'Z';
}

QString StreamMessage::typeName() const
{
    switch (body.index()) {
    case 0: return QStringLiteral("snapshot");
    case 1: return QStringLiteral("metrics");
    default: return QStringLiteral("event");
    }
}

QByteArray encodeStreamMessage(const StreamMessage &message)
{
    QJsonObject out{{QStringLiteral("type"), message.typeName()},
                    {QStringLiteral("seq"), double(message.seq)},
                    {QStringLiteral("at"), streamTime(message.at)}};
    if (const auto *snapshot = std::get_if<StreamSnapshot>(&message.body)) {
        putMetrics(out, snapshot->metrics);
        QJsonArray breakers;
        for (const StreamBreaker &b : snapshot->breakers)
            breakers.append(QJsonObject{{QStringLiteral("name"), b.name},
                                        {QStringLiteral("state"), b.state},
                                        {QStringLiteral("mode"), b.mode},
                                        {QStringLiteral("changed_by"), b.changedBy},
                                        {QStringLiteral("reason"), b.reason}});
        out.insert(QStringLiteral("breakers"), breakers);
        if (!snapshot->callbackMode.isEmpty())
            out.insert(QStringLiteral("callbacks"), snapshot->callbackMode);
    } else if (const auto *metrics = std::get_if<StreamMetrics>(&message.body)) {
        putMetrics(out, *metrics);
    } else if (const auto *event = std::get_if<StreamEvent>(&message.body)) {
        out.insert(QStringLiteral("kind"), event->kind);
        out.insert(QStringLiteral("subject"), event->subject);
        out.insert(QStringLiteral("value"), event->value);
        out.insert(QStringLiteral("actor"), event->actor);
        out.insert(QStringLiteral("reason"), event->reason);
        if (!event->detail.isEmpty())
            out.insert(QStringLiteral("detail"), event->detail);
    }
    return QJsonDocument(out).toJson(QJsonDocument::Compact);
}

const QStringList &streamEventKinds()
{
    static const QStringList kinds{streamevent::BreakerMode,
                                   streamevent::CallbackMode,
                                   streamevent::CompensationProposed,
                                   streamevent::CompensationDecided,
                                   streamevent::FindingRaised,
                                   streamevent::ScenarioProgress,
                                   streamevent::LockLost,
                                   streamevent::FenceStaleRefused,
                                   streamevent::OutboxDeadLetter};
    return kinds;
}

std::optional<StreamMessage> decodeStreamMessage(const QByteArray &json, QString *error)
{
    Reader r;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    auto refuse = [&](const QString &why) -> std::optional<StreamMessage> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (parseError.error != QJsonParseError::NoError)
        return refuse(QStringLiteral("not JSON: %1").arg(parseError.errorString()));
    if (!doc.isObject())
        return refuse(QStringLiteral("not a JSON object"));
    const QJsonObject o = doc.object();

    StreamMessage message;
    const QString type = r.string(o, QStringLiteral("type"));
    const QJsonValue seq = r.field(o, QStringLiteral("seq"));
    message.seq = r.count(seq, QStringLiteral("seq"));
    if (r.error.isEmpty() && message.seq < 1)
        r.fail(QStringLiteral("seq must be at least 1"));
    const QString at = r.string(o, QStringLiteral("at"));
    if (r.error.isEmpty()) {
        // Date and time parsed apart: a local-time parse could fall into a DST gap.
        if (at.size() == 24 && at.at(10) == u'T' && at.at(23) == u'Z')
            message.at = QDateTime(QDate::fromString(at.left(10), QStringLiteral("yyyy-MM-dd")),
                                   QTime::fromString(at.mid(11, 12), QStringLiteral("HH:mm:ss.zzz")), Qt::UTC);
        if (!message.at.isValid())
            r.fail(QStringLiteral("at must be UTC ISO-8601 with milliseconds"));
    }
    if (!r.error.isEmpty())
        return refuse(r.error);

    if (type == u"snapshot") {
        StreamSnapshot snapshot;
        snapshot.metrics = r.metrics(o);
        const QJsonValue list = r.field(o, QStringLiteral("breakers"));
        if (!list.isUndefined() && !list.isArray())
            r.fail(QStringLiteral("breakers must be an array"));
        const QJsonArray breakers = list.toArray();
        for (const QJsonValue &item : breakers) {
            if (!item.isObject()) {
                r.fail(QStringLiteral("breakers[] must be objects"));
                break;
            }
            const QJsonObject b = item.toObject();
            snapshot.breakers.append({r.string(b, QStringLiteral("name")), r.string(b, QStringLiteral("state")),
                                      r.string(b, QStringLiteral("mode")), r.string(b, QStringLiteral("changed_by")),
                                      r.string(b, QStringLiteral("reason"))});
        }
        const QJsonValue callbacks = o.value(QStringLiteral("callbacks"));
        if (!callbacks.isUndefined() && !callbacks.isString())
            r.fail(QStringLiteral("callbacks must be a string"));
        snapshot.callbackMode = callbacks.toString();
        message.body = snapshot;
    } else if (type == u"metrics") {
        message.body = r.metrics(o);
    } else if (type == u"event") {
        StreamEvent event;
        event.kind = r.string(o, QStringLiteral("kind"));
        event.subject = r.string(o, QStringLiteral("subject"));
        event.value = r.string(o, QStringLiteral("value"));
        event.actor = r.string(o, QStringLiteral("actor"));
        event.reason = r.string(o, QStringLiteral("reason"));
        if (r.error.isEmpty() && !streamEventKinds().contains(event.kind))
            r.fail(QStringLiteral("unknown event kind \"%1\"").arg(event.kind));
        const QJsonValue detail = o.value(QStringLiteral("detail"));
        if (!detail.isUndefined() && !detail.isObject())
            r.fail(QStringLiteral("detail must be an object"));
        event.detail = detail.toObject();
        message.body = event;
    } else {
        r.fail(QStringLiteral("unknown type %1").arg(type));
    }
    if (!r.error.isEmpty())
        return refuse(r.error);
    return message;
}

} // namespace payonce
