#include "streamhub.h"

#include "core/metrics/metricsregistry.h"
#include "logging/categories.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QWebSocket>

#include <optional>

namespace payonce::stream {

struct StreamHub::Client {
    quint64 id = 0;
    std::unique_ptr<QWebSocket> socket;
    qint64 nextSeq = 1;
    std::optional<StreamMetrics> pending; // the latest coalesced metrics, not sent yet
    QMap<Layer, qint64> lastCounts;       // as of the previous message, for the rates
    QElapsedTimer sinceLast;
    bool dead = false;
};

StreamHub::StreamHub(const Options &options, MetricsSource metrics, SnapshotSource snapshot,
                     core::MetricsRegistry *counters, QObject *parent)
    : QObject(parent), m_options(options), m_metrics(std::move(metrics)), m_snapshot(std::move(snapshot))
{
    if (counters) {
        m_coalesced = &counters->counter(QStringLiteral("payonce_stream_coalesced_total"),
                                         QStringLiteral("Stream metrics messages replaced by a later one because "
                                                        "the client's socket was backed up"));
        m_dropped = &counters->counter(
            QStringLiteral("payonce_stream_dropped_total"),
            QStringLiteral("Stream clients dropped because their backlog passed the hard bound"));
    }
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &StreamHub::tick);
}

StreamHub::~StreamHub()
{
    stop();
}

void StreamHub::start()
{
    m_timer.start(m_options.interval);
}

void StreamHub::stop()
{
    m_timer.stop();
    auto clients = std::move(m_clients);
    m_clients.clear();
    for (auto &client : clients) {
        client->socket->disconnect(this);
        client->socket->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("agent stopping"));
    }
}

int StreamHub::clientCount() const
{
    return int(m_clients.size());
}

quint64 StreamHub::coalescedTotal() const
{
    return m_coalescedTotal;
}

quint64 StreamHub::droppedTotal() const
{
    return m_droppedTotal;
}

void StreamHub::addClient(std::unique_ptr<QWebSocket> socket)
{
    auto client = std::make_unique<Client>();
    client->id = ++m_lastId;
    client->socket = std::move(socket);
    Client *c = client.get();
    m_clients.push_back(std::move(client));
    // Removed later, never inside a loop over the clients (abort() emits this at once).
    connect(c->socket.get(), &QWebSocket::disconnected, this, [this, c] {
        c->dead = true;
        QMetaObject::invokeMethod(
            this, [this, id = c->id] { remove(id); }, Qt::QueuedConnection);
    });
    connect(c->socket.get(), &QWebSocket::bytesWritten, this, [this, c] { onBytesWritten(c); });

    StreamSnapshot snapshot = m_snapshot ? m_snapshot() : StreamSnapshot{};
    snapshot.metrics = m_metrics ? m_metrics() : StreamMetrics{};
    for (Layer layer : allLayers)
        snapshot.metrics.rates.insert(layer, 0.0);
    c->lastCounts = snapshot.metrics.duplicates;
    c->sinceLast.start();
    send(*c, {0, {}, snapshot});
}

void StreamHub::publish(const StreamEvent &event)
{
    // Route handlers run on the worker pool; sockets are touched on the hub's thread only.
    QMetaObject::invokeMethod(
        this,
        [this, event] {
            for (auto &client : m_clients) {
                if (!client->dead)
                    send(*client, {0, {}, event});
            }
        },
        Qt::QueuedConnection);
}

void StreamHub::tick()
{
    if (m_clients.empty())
        return;
    const StreamMetrics counts = m_metrics ? m_metrics() : StreamMetrics{};
    for (auto &client : m_clients) {
        if (client->dead)
            continue;
        if (client->socket->bytesToWrite() > m_options.coalesceAboveBytes) {
            // Only the latest is kept: one more metrics message this client will not get.
            if (client->pending) {
                ++m_coalescedTotal;
                if (m_coalesced)
                    m_coalesced->add();
            }
            client->pending = counts;
            continue;
        }
        client->pending.reset();
        sendMetrics(*client, counts);
    }
}

void StreamHub::sendMetrics(Client &client, const StreamMetrics &counts)
{
    StreamMetrics m = counts;
    const double seconds = std::max<qint64>(1, client.sinceLast.restart()) / 1000.0;
    for (Layer layer : allLayers) {
        const qint64 delta = m.duplicates.value(layer) - client.lastCounts.value(layer);
        m.rates.insert(layer, delta > 0 ? double(delta) / seconds : 0.0);
    }
    client.lastCounts = m.duplicates;
    send(client, {0, {}, m});
}

void StreamHub::send(Client &client, StreamMessage message)
{
    message.seq = client.nextSeq++;
    message.at = QDateTime::currentDateTimeUtc();
    client.socket->sendTextMessage(QString::fromUtf8(encodeStreamMessage(message)));
    dropIfOverBound(client);
}

void StreamHub::onBytesWritten(Client *client)
{
    if (client->dead || !client->pending || client->socket->bytesToWrite() > m_options.coalesceAboveBytes)
        return;
    const StreamMetrics counts = *client->pending;
    client->pending.reset();
    sendMetrics(*client, counts);
}

void StreamHub::dropIfOverBound(Client &client)
{
    if (client.dead || client.socket->bytesToWrite() <= m_options.dropAboveBytes)
        return;
    qCWarning(lcHttp).noquote() << "stream: dropping a client whose backlog passed" << m_options.dropAboveBytes
                                << "bytes (" << client.socket->peerAddress().toString() << ")";
    ++m_droppedTotal;
    if (m_dropped)
        m_dropped->add();
    client.dead = true;
    client.socket->abort(); // emits disconnected: removed from the next event-loop pass
}

void StreamHub::remove(quint64 id)
{
    for (auto it = m_clients.begin(); it != m_clients.end(); ++it) {
        if ((*it)->id != id)
            continue;
        std::unique_ptr<Client> gone = std::move(*it);
        m_clients.erase(it);
        gone->socket->disconnect(this);
        // Not deleted inside its own signal.
        gone->socket.release()->deleteLater();
        return;
    }
}

} // namespace payonce::stream
