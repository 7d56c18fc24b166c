#pragma once

#include <QJsonObject>
#include <QString>

namespace payonce::console {

/// The incident switch's state from successive GET /api/v1/mode answers: the callback
/// mode, who set it and why, the accepted rows waiting, and — once accept-only is off —
/// how far the drain has come: the most rows seen waiting since accept-only began is the
/// 100 % the drain works down from.
class DrainProgress {
public:
    /// One answer of GET/PUT /api/v1/mode; false (nothing changed) when it is not one.
    bool apply(const QJsonObject &mode);

    QString mode() const { return m_mode; }
    bool acceptOnly() const { return m_mode == u"accept_only"; }
    qint64 waiting() const { return m_waiting; }
    /// The most rows waiting seen since accept-only was switched on (or the drain began).
    qint64 peak() const { return m_peak; }
    /// Normal mode with rows still waiting: the worker is processing them.
    bool draining() const { return !acceptOnly() && m_waiting > 0; }
    /// 0…100: the share of the peak processed; 100 when nothing waits.
    int percentDone() const;
    /// Whether the view should keep asking the agent (accept-only or draining).
    bool wantsPolling() const { return acceptOnly() || draining(); }
    QString changedBy() const { return m_changedBy; }
    QString reason() const { return m_reason; }
    QString changedAt() const { return m_changedAt; }

private:
    QString m_mode;
    qint64 m_waiting = 0;
    qint64 m_peak = 0;
    QString m_changedBy;
    QString m_reason;
    QString m_changedAt;
};

} // namespace payonce::console
