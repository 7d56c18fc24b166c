#include "keystoreconnection_p.h"

namespace payonce::redis::keystore {

/// The calling thread's connection to a backend (in cluster mode: to one of its nodes).
/// Connections of closed stores are freed on the thread's next call to any store, or at
/// thread exit.
Connection &connectionFor(const std::shared_ptr<Backend> &backend, const std::optional<config::HostPort> &node)
{
    thread_local std::vector<std::unique_ptr<Connection>> connections;
    std::erase_if(connections, [](const auto &connection) { return connection->backend()->closed.load(); });
    for (const auto &connection : connections) {
        if (connection->backend() == backend && connection->fixedNode() == node)
            return *connection;
    }
    connections.push_back(std::make_unique<Connection>(backend, node));
    return *connections.back();
}

/// Runs `call` on the calling thread's connection that serves `slot`: the store's one connection of this
/// thread in single and Sentinel modes; in cluster mode the one to the slot's master,
/// following MOVED (the slot has a new owner: the map learns it and the call runs there —
/// the command was not run, so this is safe for any command) and ASK (the slot is being
/// moved: ASKING and the call on the node named, once), a few hops at most.
Result<Reply> runOnSlot(const std::shared_ptr<Backend> &backend, int slot, const Call &call)
{
    if (!backend->cluster)
        return call(connectionFor(backend));
    auto master = backend->cluster->masterFor(slot);
    if (!master.ok()) {
        backend->degraded.store(true);
        return master.error();
    }
    config::HostPort node = master.value();
    bool asking = false;
    for (int hop = 0;; ++hop) {
        Connection &connection = connectionFor(backend, node);
        if (asking) {
            if (auto asked = connection.asking(); !asked.ok())
                return asked.error();
        }
        auto reply = call(connection);
        if (!reply.ok() || !Connection::isRedirect(*reply))
            return reply;
        // "MOVED <slot> <host>:<port>" / "ASK <slot> <host>:<port>"
        const QList<QByteArray> words = reply->text.split(' ');
        const qsizetype colon = words.size() == 3 ? words[2].lastIndexOf(':') : -1;
        bool portOk = false;
        const int port = colon > 0 ? words[2].mid(colon + 1).toInt(&portOk) : 0;
        if (!portOk || hop >= 4)
            return backend->unavailable(
                QStringLiteral("slot %1: %2 (after %3 redirects)").arg(slot).arg(reply->errorText()).arg(hop));
        node = config::HostPort{QString::fromUtf8(words[2].left(colon)), port};
        asking = words[0] == "ASK";
        if (!asking)
            backend->cluster->moved(slot, node);
    }
}

} // namespace payonce::redis::keystore
