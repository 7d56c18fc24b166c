#pragma once

#include <QJsonObject>
#include <QString>

namespace payonce::core {

/// A reconciliation finding as raised by the callback path or the patrol, upserted on
/// (kind, subject): seen again, seen_count grows and last_seen moves (docs/openapi.yaml, findings).
struct Finding {
    QString kind;    ///< "effect_mismatch" | "missing_outbox" | "amount_mismatch" | "double_payment" | "oversold" | …
    QString subject; ///< e.g. "order:ORD001", "wechat:<pay_no>" or "<order_no>:<sku_id>"
    QString orderNo;
    QString payNo;
    QJsonObject evidence;
};

/// A finding as stored.
struct StoredFinding {
    qint64 id = 0;
    QString kind;
    QString subject;
    QString orderNo;
    QString payNo;
    QJsonObject evidence;
    QString status; ///< "open" | "resolved"
    qint64 seenCount = 0;
    qint64 firstSeenAtMs = 0;
    qint64 lastSeenAtMs = 0;
};

} // namespace payonce::core
