-- Refunds: one row per approved refund compensation. refund_no is our
-- out_refund_no at the platform, derived from the compensation, so approving twice (or
-- re-sending after a timeout) can never make a second refund; the status CAS decides who
-- settles it, however many notifications arrive.
CREATE TABLE refunds (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  refund_no          TEXT     NOT NULL UNIQUE,
  compensation_id    INTEGER  NOT NULL UNIQUE REFERENCES compensations (id),
  order_no           TEXT     NOT NULL REFERENCES orders (order_no),
  channel            TEXT     NOT NULL CHECK (channel IN ('wechat','alipay')),
  pay_no             TEXT     NOT NULL,
  payment_no         TEXT     NOT NULL,
  amount_fen         INTEGER  NOT NULL CHECK (amount_fen > 0),
  total_fen          INTEGER  NOT NULL CHECK (total_fen > 0),
  -- 1: the payment the order is PAID by (the order goes REFUNDING, then REFUNDED or back to
  -- PAID); 0: an extra payment (a double payment), the order is left as it is
  own_payment        SMALLINT NOT NULL CHECK (own_payment IN (0, 1)),
  status             TEXT     NOT NULL CHECK (status IN ('requested','processing','succeeded','failed')),
  platform_refund_id TEXT,
  attempts           INTEGER  NOT NULL DEFAULT 0,
  -- while one agent thread sends the refund to the platform: nobody else sends it
  sending_until      INTEGER,
  last_error         TEXT,
  created_at         INTEGER  NOT NULL,
  updated_at         INTEGER  NOT NULL,
  finished_at        INTEGER
);
CREATE INDEX refunds_status ON refunds (status, updated_at);
CREATE INDEX refunds_order ON refunds (order_no);

-- A refund that failed at the platform is a finding of its own. SQLite cannot change a
-- CHECK: the table is rebuilt (the migration runner turns foreign keys off meanwhile and
-- checks them before COMMIT; compensations.finding_id points at the rebuilt table by name).
CREATE TABLE findings_rebuilt (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  kind          TEXT    NOT NULL CHECK (kind IN ('effect_mismatch','missing_outbox','stuck_paying','stuck_accepted','amount_mismatch','double_payment','oversold','refund_failed')),
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
