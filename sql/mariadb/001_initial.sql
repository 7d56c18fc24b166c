-- payonce schema, MariaDB 10.11. The same tables as ../sqlite and ../postgresql, column for column.
-- Conventions (all three dialects): every *_at column is UTC epoch milliseconds; money is
-- integer fen (*_fen); flags are SMALLINT 0/1; statuses are checked strings. The unique
-- keys below ARE layer L4 and the side-effect keys of docs/design.md: the database, not a prior
-- SELECT, decides what is a duplicate.

CREATE TABLE orders (
  order_no               VARCHAR(64) NOT NULL PRIMARY KEY,
  user_id                BIGINT NOT NULL,
  amount_fen             BIGINT NOT NULL CHECK (amount_fen > 0),
  currency               VARCHAR(8) NOT NULL DEFAULT 'CNY',
  status                 VARCHAR(16) NOT NULL CHECK (status IN ('PENDING','PAYING','PAID','CLOSED','REFUNDING','REFUNDED')),
  version                BIGINT NOT NULL DEFAULT 0,
  -- the last fencing token that wrote this order; a write with a smaller one is refused
  fence                  BIGINT NOT NULL DEFAULT 0,
  pay_no                 VARCHAR(64),
  paid_channel           VARCHAR(16),
  reward_coupon_template VARCHAR(64),
  reward_points          BIGINT NOT NULL DEFAULT 0 CHECK (reward_points >= 0),
  created_at             BIGINT NOT NULL,
  updated_at             BIGINT NOT NULL,
  paid_at                BIGINT,
  closed_at              BIGINT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX orders_status_updated ON orders (status, updated_at);
CREATE INDEX orders_user ON orders (user_id);

CREATE TABLE order_items (
  order_no VARCHAR(64) NOT NULL,
  sku_id   VARCHAR(64) NOT NULL,
  qty      BIGINT NOT NULL CHECK (qty > 0),
  PRIMARY KEY (order_no, sku_id),
  FOREIGN KEY (order_no) REFERENCES orders (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE skus (
  sku_id     VARCHAR(64) NOT NULL PRIMARY KEY,
  -- never negative: the conditional UPDATE ... WHERE stock >= ? is the guard, this the backstop
  stock      BIGINT NOT NULL CHECK (stock >= 0),
  updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- L1: one record per (user, Idempotency-Key).
CREATE TABLE idempotency_keys (
  id               BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id          BIGINT NOT NULL,
  idem_key         VARCHAR(255) NOT NULL,
  fingerprint      VARCHAR(64) NOT NULL,
  status           VARCHAR(16) NOT NULL CHECK (status IN ('in_flight','completed')),
  response_status  BIGINT,
  response_body    MEDIUMTEXT,
  response_headers MEDIUMTEXT,
  locked_at        BIGINT,
  created_at       BIGINT NOT NULL,
  completed_at     BIGINT,
  UNIQUE (user_id, idem_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- L4 for confirms: one live payment record per (order, channel); a failed one is reused.
CREATE TABLE payment_records (
  id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  payment_no  VARCHAR(64) NOT NULL UNIQUE,
  order_no    VARCHAR(64) NOT NULL,
  channel     VARCHAR(16) NOT NULL CHECK (channel IN ('wechat','alipay')),
  status      VARCHAR(16) NOT NULL CHECK (status IN ('creating','pending','paid','failed','closed')),
  attempt     BIGINT NOT NULL DEFAULT 1,
  amount_fen  BIGINT NOT NULL CHECK (amount_fen > 0),
  code_url    MEDIUMTEXT,
  last_error  MEDIUMTEXT,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  UNIQUE (order_no, channel),
  FOREIGN KEY (order_no) REFERENCES orders (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- L4 for callbacks: one row per (channel, pay_no), accepted before processing.
CREATE TABLE pay_callback_log (
  id           BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  channel      VARCHAR(16) NOT NULL CHECK (channel IN ('wechat','alipay')),
  pay_no       VARCHAR(64) NOT NULL,
  order_no     VARCHAR(64) NOT NULL,
  amount_fen   BIGINT NOT NULL,
  status       VARCHAR(16) NOT NULL CHECK (status IN ('accepted','processed')),
  delivery_id  BIGINT,
  outcome      VARCHAR(32),
  created_at   BIGINT NOT NULL,
  processed_at BIGINT,
  UNIQUE (channel, pay_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX pay_callback_log_status ON pay_callback_log (status, created_at);
CREATE INDEX pay_callback_log_order ON pay_callback_log (order_no);

-- Every delivery, verified or not (metadata always; the raw body only when verified).
CREATE TABLE callback_deliveries (
  id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  channel     VARCHAR(16) NOT NULL,
  pay_no      VARCHAR(64),
  order_no    VARCHAR(64),
  received_at BIGINT NOT NULL,
  verified    SMALLINT NOT NULL CHECK (verified IN (0, 1)),
  layer       VARCHAR(32) NOT NULL,
  http_status BIGINT NOT NULL,
  error_code  VARCHAR(64),
  headers     MEDIUMTEXT,
  raw_body    MEDIUMTEXT,
  agent_id    VARCHAR(128),
  trace_id    VARCHAR(64)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX callback_deliveries_pay_no ON callback_deliveries (pay_no);
CREATE INDEX callback_deliveries_order_no ON callback_deliveries (order_no);
CREATE INDEX callback_deliveries_received ON callback_deliveries (received_at);

-- Side effects, each idempotent on its own key.
CREATE TABLE stock_log (
  id         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no   VARCHAR(64) NOT NULL,
  sku_id     VARCHAR(64) NOT NULL,
  qty        BIGINT NOT NULL,
  fence      BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (order_no, sku_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE user_coupon (
  id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no    VARCHAR(64) NOT NULL,
  user_id     BIGINT NOT NULL,
  template_id VARCHAR(64) NOT NULL,
  status      VARCHAR(16) NOT NULL CHECK (status IN ('active','frozen')),
  fence       BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  UNIQUE (order_no, template_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A reversal is a negative entry under its own point_type, so it too happens once.
CREATE TABLE point_log (
  id         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no   VARCHAR(64) NOT NULL,
  user_id    BIGINT NOT NULL,
  point_type VARCHAR(64) NOT NULL,
  delta      BIGINT NOT NULL,
  fence      BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (order_no, point_type)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX point_log_user ON point_log (user_id);

-- Written in the business transaction; event_id is deterministic ("order.paid:ORD001"),
-- so the same event cannot be enqueued twice.
CREATE TABLE outbox (
  id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  event_id        VARCHAR(191) NOT NULL UNIQUE,
  event_type      VARCHAR(64) NOT NULL,
  aggregate_id    VARCHAR(128) NOT NULL,
  payload         MEDIUMTEXT NOT NULL,
  status          VARCHAR(16) NOT NULL CHECK (status IN ('pending','delivered','dead')),
  attempts        BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  claimed_by      VARCHAR(128),
  claimed_until   BIGINT,
  last_error      MEDIUMTEXT,
  redriven        SMALLINT NOT NULL DEFAULT 0 CHECK (redriven IN (0, 1)),
  trace_id        VARCHAR(64),
  created_at      BIGINT NOT NULL,
  delivered_at    BIGINT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX outbox_aggregate ON outbox (aggregate_id);

-- One row per (kind, subject), seen again and again across patrol runs.
CREATE TABLE findings (
  id            BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind          VARCHAR(32) NOT NULL CHECK (kind IN ('effect_mismatch','missing_outbox','stuck_paying','stuck_accepted','amount_mismatch','double_payment','oversold')),
  subject       VARCHAR(191) NOT NULL,
  order_no      VARCHAR(64),
  pay_no        VARCHAR(64),
  evidence      MEDIUMTEXT NOT NULL,
  status        VARCHAR(16) NOT NULL CHECK (status IN ('open','resolved')),
  seen_count    BIGINT NOT NULL DEFAULT 1,
  first_seen_at BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL,
  resolved_at   BIGINT,
  UNIQUE (kind, subject)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX findings_status ON findings (status, last_seen_at);
CREATE INDEX findings_order ON findings (order_no);

CREATE TABLE compensations (
  id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind            VARCHAR(32) NOT NULL CHECK (kind IN ('freeze_coupon','reverse_points','restore_stock','refund')),
  order_no        VARCHAR(64) NOT NULL,
  pay_no          VARCHAR(64),
  amount_fen      BIGINT,
  finding_id      BIGINT,
  -- a proposal made twice for the same reason is one proposal
  dedup_key       VARCHAR(191) UNIQUE,
  status          VARCHAR(16) NOT NULL CHECK (status IN ('proposed','approved','rejected','executed','failed')),
  proposed_by     VARCHAR(128) NOT NULL,
  proposal_reason MEDIUMTEXT NOT NULL,
  decided_by      VARCHAR(128),
  decision_reason MEDIUMTEXT,
  decided_at      BIGINT,
  executed_at     BIGINT,
  result          MEDIUMTEXT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  FOREIGN KEY (finding_id) REFERENCES findings (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX compensations_status ON compensations (status, created_at);

-- Append-only: the triggers below refuse UPDATE and DELETE.
CREATE TABLE audit_log (
  id           BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at           BIGINT NOT NULL,
  actor        VARCHAR(128) NOT NULL,
  action       VARCHAR(64) NOT NULL,
  target       VARCHAR(191) NOT NULL,
  before_state MEDIUMTEXT,
  after_state  MEDIUMTEXT,
  reason       MEDIUMTEXT NOT NULL,
  trace_id     VARCHAR(64)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, at);
CREATE INDEX audit_log_action ON audit_log (action, at);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log FOR EACH ROW
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only';

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log FOR EACH ROW
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only';

-- Operator state every agent obeys (breaker modes, callback mode), optimistic by version.
CREATE TABLE settings (
  name       VARCHAR(128) NOT NULL PRIMARY KEY,
  value      MEDIUMTEXT NOT NULL,
  version    BIGINT NOT NULL DEFAULT 1,
  updated_at BIGINT NOT NULL,
  updated_by VARCHAR(128) NOT NULL,
  reason     MEDIUMTEXT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE qa_runs (
  id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  scenario_id VARCHAR(64) NOT NULL UNIQUE,
  kind        VARCHAR(32) NOT NULL,
  params      MEDIUMTEXT NOT NULL,
  status      VARCHAR(16) NOT NULL CHECK (status IN ('running','passed','failed','error')),
  progress    MEDIUMTEXT,
  report      MEDIUMTEXT,
  started_by  VARCHAR(128) NOT NULL,
  started_at  BIGINT NOT NULL,
  finished_at BIGINT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The epoch half of fencing tokens: one row per key-store instance ever seen (a Redis
-- run_id, an embedded store's start id); the epoch only grows.
CREATE TABLE fence_epochs (
  epoch       BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  instance_id VARCHAR(128) NOT NULL UNIQUE,
  created_at  BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
