-- payonce schema, SQLite. The same tables as ../postgresql and ../mariadb, column for column.
-- Conventions (all three dialects): every *_at column is UTC epoch milliseconds; money is
-- integer fen (*_fen); flags are SMALLINT 0/1; statuses are checked strings. The unique
-- keys below ARE layer L4 and the side-effect keys of docs/design.md: the database, not a prior
-- SELECT, decides what is a duplicate.

CREATE TABLE orders (
  order_no               TEXT    NOT NULL PRIMARY KEY,
  user_id                INTEGER NOT NULL,
  amount_fen             INTEGER NOT NULL CHECK (amount_fen > 0),
  currency               TEXT    NOT NULL DEFAULT 'CNY',
  status                 TEXT    NOT NULL CHECK (status IN ('PENDING','PAYING','PAID','CLOSED','REFUNDING','REFUNDED')),
  version                INTEGER NOT NULL DEFAULT 0,
  -- the last fencing token that wrote this order; a write with a smaller one is refused
  fence                  INTEGER NOT NULL DEFAULT 0,
  pay_no                 TEXT,
  paid_channel           TEXT,
  reward_coupon_template TEXT,
  reward_points          INTEGER NOT NULL DEFAULT 0 CHECK (reward_points >= 0),
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  paid_at                INTEGER,
  closed_at              INTEGER
);
CREATE INDEX orders_status_updated ON orders (status, updated_at);
CREATE INDEX orders_user ON orders (user_id);

CREATE TABLE order_items (
  order_no TEXT    NOT NULL REFERENCES orders (order_no),
  sku_id   TEXT    NOT NULL,
  qty      INTEGER NOT NULL CHECK (qty > 0),
  PRIMARY KEY (order_no, sku_id)
);

CREATE TABLE skus (
  sku_id     TEXT    NOT NULL PRIMARY KEY,
  -- never negative: the conditional UPDATE ... WHERE stock >= ? is the guard, this the backstop
  stock      INTEGER NOT NULL CHECK (stock >= 0),
  updated_at INTEGER NOT NULL
);

-- L1: one record per (user, Idempotency-Key).
CREATE TABLE idempotency_keys (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id          INTEGER NOT NULL,
  idem_key         TEXT    NOT NULL,
  fingerprint      TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('in_flight','completed')),
  response_status  INTEGER,
  response_body    TEXT,
  response_headers TEXT,
  locked_at        INTEGER,
  created_at       INTEGER NOT NULL,
  completed_at     INTEGER,
  UNIQUE (user_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- L4 for confirms: one live payment record per (order, channel); a failed one is reused.
CREATE TABLE payment_records (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  payment_no  TEXT    NOT NULL UNIQUE,
  order_no    TEXT    NOT NULL REFERENCES orders (order_no),
  channel     TEXT    NOT NULL CHECK (channel IN ('wechat','alipay')),
  status      TEXT    NOT NULL CHECK (status IN ('creating','pending','paid','failed','closed')),
  attempt     INTEGER NOT NULL DEFAULT 1,
  amount_fen  INTEGER NOT NULL CHECK (amount_fen > 0),
  code_url    TEXT,
  last_error  TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (order_no, channel)
);

-- L4 for callbacks: one row per (channel, pay_no), accepted before processing.
CREATE TABLE pay_callback_log (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  channel      TEXT    NOT NULL CHECK (channel IN ('wechat','alipay')),
  pay_no       TEXT    NOT NULL,
  order_no     TEXT    NOT NULL,
  amount_fen   INTEGER NOT NULL,
  status       TEXT    NOT NULL CHECK (status IN ('accepted','processed')),
  delivery_id  INTEGER,
  outcome      TEXT,
  created_at   INTEGER NOT NULL,
  processed_at INTEGER,
  UNIQUE (channel, pay_no)
);
CREATE INDEX pay_callback_log_status ON pay_callback_log (status, created_at);
CREATE INDEX pay_callback_log_order ON pay_callback_log (order_no);

-- Every delivery, verified or not (metadata always; the raw body only when verified).
CREATE TABLE callback_deliveries (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  channel     TEXT     NOT NULL,
  pay_no      TEXT,
  order_no    TEXT,
  received_at INTEGER  NOT NULL,
  verified    SMALLINT NOT NULL CHECK (verified IN (0, 1)),
  layer       TEXT     NOT NULL,
  http_status INTEGER  NOT NULL,
  error_code  TEXT,
  headers     TEXT,
  raw_body    TEXT,
  agent_id    TEXT,
  trace_id    TEXT
);
CREATE INDEX callback_deliveries_pay_no ON callback_deliveries (pay_no);
CREATE INDEX callback_deliveries_order_no ON callback_deliveries (order_no);
CREATE INDEX callback_deliveries_received ON callback_deliveries (received_at);

-- Side effects, each idempotent on its own key.
CREATE TABLE stock_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no   TEXT    NOT NULL,
  sku_id     TEXT    NOT NULL,
  qty        INTEGER NOT NULL,
  fence      INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (order_no, sku_id)
);

CREATE TABLE user_coupon (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no    TEXT    NOT NULL,
  user_id     INTEGER NOT NULL,
  template_id TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('active','frozen')),
  fence       INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (order_no, template_id)
);

-- A reversal is a negative entry under its own point_type, so it too happens once.
CREATE TABLE point_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no   TEXT    NOT NULL,
  user_id    INTEGER NOT NULL,
  point_type TEXT    NOT NULL,
  delta      INTEGER NOT NULL,
  fence      INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (order_no, point_type)
);
CREATE INDEX point_log_user ON point_log (user_id);

-- Written in the business transaction; event_id is deterministic ("order.paid:ORD001"),
-- so the same event cannot be enqueued twice.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id        TEXT     NOT NULL UNIQUE,
  event_type      TEXT     NOT NULL,
  aggregate_id    TEXT     NOT NULL,
  payload         TEXT     NOT NULL,
  status          TEXT     NOT NULL CHECK (status IN ('pending','delivered','dead')),
  attempts        INTEGER  NOT NULL DEFAULT 0,
  next_attempt_at INTEGER  NOT NULL,
  claimed_by      TEXT,
  claimed_until   INTEGER,
  last_error      TEXT,
  redriven        SMALLINT NOT NULL DEFAULT 0 CHECK (redriven IN (0, 1)),
  trace_id        TEXT,
  created_at      INTEGER  NOT NULL,
  delivered_at    INTEGER
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX outbox_aggregate ON outbox (aggregate_id);

-- One row per (kind, subject), seen again and again across patrol runs.
CREATE TABLE findings (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  kind          TEXT    NOT NULL CHECK (kind IN ('effect_mismatch','missing_outbox','stuck_paying','stuck_accepted','amount_mismatch','double_payment','oversold')),
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
CREATE INDEX findings_status ON findings (status, last_seen_at);
CREATE INDEX findings_order ON findings (order_no);

CREATE TABLE compensations (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  kind            TEXT    NOT NULL CHECK (kind IN ('freeze_coupon','reverse_points','restore_stock','refund')),
  order_no        TEXT    NOT NULL,
  pay_no          TEXT,
  amount_fen      INTEGER,
  finding_id      INTEGER REFERENCES findings (id),
  -- a proposal made twice for the same reason is one proposal
  dedup_key       TEXT    UNIQUE,
  status          TEXT    NOT NULL CHECK (status IN ('proposed','approved','rejected','executed','failed')),
  proposed_by     TEXT    NOT NULL,
  proposal_reason TEXT    NOT NULL,
  decided_by      TEXT,
  decision_reason TEXT,
  decided_at      INTEGER,
  executed_at     INTEGER,
  result          TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX compensations_status ON compensations (status, created_at);

-- Append-only: the triggers below refuse UPDATE and DELETE.
CREATE TABLE audit_log (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  at           INTEGER NOT NULL,
  actor        TEXT    NOT NULL,
  action       TEXT    NOT NULL,
  target       TEXT    NOT NULL,
  before_state TEXT,
  after_state  TEXT,
  reason       TEXT    NOT NULL,
  trace_id     TEXT
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, at);
CREATE INDEX audit_log_action ON audit_log (action, at);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- Operator state every agent obeys (breaker modes, callback mode), optimistic by version.
CREATE TABLE settings (
  name       TEXT    NOT NULL PRIMARY KEY,
  value      TEXT    NOT NULL,
  version    INTEGER NOT NULL DEFAULT 1,
  updated_at INTEGER NOT NULL,
  updated_by TEXT    NOT NULL,
  reason     TEXT
);

CREATE TABLE qa_runs (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  scenario_id TEXT    NOT NULL UNIQUE,
  kind        TEXT    NOT NULL,
  params      TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('running','passed','failed','error')),
  progress    TEXT,
  report      TEXT,
  started_by  TEXT    NOT NULL,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER
);

-- The epoch half of fencing tokens: one row per key-store instance ever seen (a Redis
-- run_id, an embedded store's start id); the epoch only grows.
CREATE TABLE fence_epochs (
  epoch       INTEGER PRIMARY KEY AUTOINCREMENT,
  instance_id TEXT    NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL
);
