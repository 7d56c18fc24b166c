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

/// Locks and fencing: the pay locks held and recently lost (owner, token, renewals, time
/// left), the last fencing token per order, and the writes refused for a stale token —
/// the agent's count, and each refusal seen live. A lock.lost or fence.stale_refused
/// event updates the tables at once and fetches GET /api/v1/locks again; while shown, the
/// view also fetches every two seconds (locks live for the length of one delivery).
/// Object names: "locksPanel", "fencesPanel", "staleRefusalsPanel", "staleRefusedCount",
/// "refreshLocks".
class LocksView : public QWidget {
    Q_OBJECT
public:
    explicit LocksView(AgentClient *client, QWidget *parent = nullptr);

    LocksModel *locks() const { return m_locks; }
    FencingTokensModel *fences() const { return m_fences; }
    StaleRefusalsModel *staleRefusals() const { return m_staleRefusals; }
    void applyMessage(const payonce::StreamMessage &message);

public Q_SLOTS:
    void refresh();

private:
    AgentClient *m_client;
    LocksModel *m_locks;
    FencingTokensModel *m_fences;
    StaleRefusalsModel *m_staleRefusals;
    QLabel *m_staleCount;
    KeyStoreBanner *m_keyStore; ///< mode, master, epoch: a failover shows here
    bool m_fetching = false;
};

} // namespace payonce::console
