#pragma once

#include "jsontablemodel.h"

#include "shared/streammessage.h"

namespace payonce::console {

/// GET /api/v1/locks "locks": the pay locks an agent holds or recently lost — owner,
/// fencing token and the order it fences, time left, watchdog renewals. A lock.lost event
/// marks its row lost at once (or adds it) until the next fetch brings the agent's view.
class LocksModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit LocksModel(QObject *parent = nullptr);

    int rowOf(const QString &key) const;
    /// A lock.lost event: subject the key, actor the owner, reason why, detail its token.
    void applyLockLost(const payonce::StreamEvent &event);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

/// GET /api/v1/locks/keys "locks": every lock the key store itself holds — any agent's, on
/// every master — with its node, owner and time left; a stuck one (no expiry, or more time
/// left than any lock of ours can have) is shown in red with why.
class StoredLocksModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit StoredLocksModel(QObject *parent = nullptr);

    /// The "locks" of an answer, with the yes/no and the stuck reason in words.
    void setScan(const QJsonArray &locks);

protected:
    QVariant cellRole(const QJsonObject &row, const QString &key, int role) const override;
};

/// GET /api/v1/locks "fencing_tokens": the last fencing token each order was written with.
class FencingTokensModel : public JsonTableModel {
    Q_OBJECT
public:
    explicit FencingTokensModel(QObject *parent = nullptr);
};

/// The fence.stale_refused events seen since the console connected, newest first: a write
/// under an older fencing token that the database refused (the order, its pay_no, the
/// stale token, the agent). Bounded to the last kMaxRows.
class StaleRefusalsModel : public JsonTableModel {
    Q_OBJECT
public:
    static constexpr int kMaxRows = 500;

    explicit StaleRefusalsModel(QObject *parent = nullptr);

    void applyStaleRefused(const payonce::StreamMessage &message, const payonce::StreamEvent &event);
};

} // namespace payonce::console
