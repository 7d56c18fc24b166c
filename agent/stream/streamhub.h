#pragma once

#include "shared/streammessage.h"

#include <QObject>
#include <QTimer>

#include <chrono>
#include <functional>
#include <list>
#include <memory>

class QWebSocket;

namespace payonce::core {
class Counter;
class MetricsRegistry;
} // namespace payonce::core

namespace payonce::stream {

/// The live stream behind GET /api/v1/stream (docs/openapi.yaml, "Streams and health"): every
/// client first gets a `snapshot`, then a `metrics` message every interval, and the
/// `event`s published meanwhile; seq counts per client from 1.
///
/// A slow client never slows the agent: while a client's socket has more than
/// coalesceAboveBytes waiting to be written, its metrics messages are coalesced (only the
/// latest is kept, and sent once the socket drains below the bound); when the backlog
/// still passes dropAboveBytes (events are never coalesced) the client is dropped. Both
/// are counted (payonce_stream_coalesced_total — metrics messages not sent —,
/// payonce_stream_dropped_total).
///
/// Lives on, and must be used from, the HTTP server's thread (the WebSockets live there),
/// except publish(), which any thread may call: it posts to the hub's thread.
class StreamHub : public QObject {
    Q_OBJECT
public:
    struct Options {
        std::chrono::milliseconds interval{250};
        qint64 coalesceAboveBytes = 256 * 1024;
        qint64 dropAboveBytes = 4 * 1024 * 1024;
    };
    /// The counts of a metrics message (rates are the hub's), read on the hub's thread at
    /// every tick: must be cheap and never block (no database).
    using MetricsSource = std::function<StreamMetrics()>;
    /// The breakers list and callback mode of a snapshot (rates and counts filled by the hub).
    using SnapshotSource = std::function<StreamSnapshot()>;

    /// counters (may be null) gets the two stream counters; it must outlive the hub.
    StreamHub(const Options &options, MetricsSource metrics, SnapshotSource snapshot, core::MetricsRegistry *counters,
              QObject *parent = nullptr);
    ~StreamHub() override;

    /// Takes an accepted WebSocket: sends its snapshot now, metrics from the next tick.
    void addClient(std::unique_ptr<QWebSocket> socket);
    /// Thread-safe: the event goes to every client, in order, from the hub's thread.
    void publish(const StreamEvent &event);

    void start();
    /// Stops the ticks and closes every client (drain, shutdown).
    void stop();

    int clientCount() const;
    quint64 coalescedTotal() const;
    quint64 droppedTotal() const;

private:
    struct Client;
    void tick();
    void send(Client &client, StreamMessage message);
    void sendMetrics(Client &client, const StreamMetrics &counts);
    void onBytesWritten(Client *client);
    void dropIfOverBound(Client &client);
    void remove(quint64 id);

    Options m_options;
    MetricsSource m_metrics;
    SnapshotSource m_snapshot;
    core::Counter *m_coalesced = nullptr;
    core::Counter *m_dropped = nullptr;
    quint64 m_coalescedTotal = 0;
    quint64 m_droppedTotal = 0;
    quint64 m_lastId = 0;
    QTimer m_timer;
    std::list<std::unique_ptr<Client>> m_clients;
};

} // namespace payonce::stream
