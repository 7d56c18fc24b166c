#pragma once

#include "shared/streammessage.h"

#include <QWidget>

class QLabel;

namespace payonce::console {

class AgentClient;
class FencingTokensModel;
class KeyStoreBanner;
class LocksModel;
class StaleRefusalsModel;
class StoredLocksModel;

/// Locks and fencing: the pay locks held and recently lost (owner, token, renewals, time
/// left), the last fencing token per order, and the writes refused for a stale token —
/// the agent's count, and each refusal seen live. A lock.lost or fence.stale_refused
/// event updates the tables at once and fetches GET /api/v1/locks again; while shown, the
/// view also fetches every two seconds (locks live for the length of one delivery).
/// Below, the key inspector: on demand (a SCAN of every master is not for polling), every
/// lock the key store itself holds — any agent's, on every node of a cluster — with the
/// stuck ones in red. Object names: "locksPanel", "fencesPanel", "staleRefusalsPanel",
/// "staleRefusedCount", "refreshLocks", "storedLocksPanel", "scanStoredLocks",
/// "storedLocksSummary".
class LocksView : public QWidget {
    Q_OBJECT
public:
    explicit LocksView(AgentClient *client, QWidget *parent = nullptr);

    LocksModel *locks() const { return m_locks; }
    FencingTokensModel *fences() const { return m_fences; }
    StaleRefusalsModel *staleRefusals() const { return m_staleRefusals; }
    StoredLocksModel *storedLocks() const { return m_storedLocks; }
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    void refresh();
    /// GET /api/v1/locks/keys: the key store scanned on every master.
    void scanStore();

private:
    AgentClient *m_client;
    LocksModel *m_locks;
    FencingTokensModel *m_fences;
    StaleRefusalsModel *m_staleRefusals;
    StoredLocksModel *m_storedLocks;
    QLabel *m_staleCount;
    QLabel *m_storedSummary;
    KeyStoreBanner *m_keyStore; ///< mode, master, epoch: a failover shows here
    bool m_fetching = false;
    bool m_scanning = false;
};

} // namespace payonce::console
