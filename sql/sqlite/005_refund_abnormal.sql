-- WeChat's REFUND.ABNORMAL is not a failure: the refund waits for manual handling at the
-- platform and may still pay out. The refund stays processing with a finding of its own
-- kind until SUCCESS or CLOSED settles it. SQLite cannot change a CHECK: the table is
-- rebuilt as in 003 (compensations.finding_id points at it by name).
CREATE TABLE findings_rebuilt (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  kind          TEXT    NOT NULL CHECK (kind IN ('effect_mismatch','missing_outbox','stuck_paying','stuck_accepted','amount_mismatch','double_payment','oversold','refund_failed','refund_abnormal')),
  subject       TEXT    NOT NULL,
  order_no      TEXT,
  pay_no        TEXT,
  evidence      TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('open','resolved')),
  seen_count    INTEGER NOT NULL DEFAULT 1,
  first_seen_at INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL,
  resolved_at   INTEGER,
  UNIQUE (kind, subject)
);
INSERT INTO findings_rebuilt (id, kind, subject, order_no, pay_no, evidence, status, seen_count, first_seen_at,
                              last_seen_at, resolved_at)
  SELECT id, kind, subject, order_no, pay_no, evidence, status, seen_count, first_seen_at, last_seen_at, resolved_at
  FROM findings;
DROP TABLE findings;
ALTER TABLE findings_rebuilt RENAME TO findings;
CREATE INDEX findings_status ON findings (status, last_seen_at);
CREATE INDEX findings_order ON findings (order_no);
