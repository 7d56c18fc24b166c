-- Refunds: one row per approved refund compensation. refund_no is our
-- out_refund_no at the platform, derived from the compensation, so approving twice (or
-- re-sending after a timeout) can never make a second refund; the status CAS decides who
-- settles it, however many notifications arrive.
CREATE TABLE refunds (
  id                 BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  refund_no          VARCHAR(64) NOT NULL UNIQUE,
  compensation_id    BIGINT NOT NULL UNIQUE,
  order_no           VARCHAR(64) NOT NULL,
  channel            VARCHAR(16) NOT NULL CHECK (channel IN ('wechat','alipay')),
  pay_no             VARCHAR(64) NOT NULL,
  payment_no         VARCHAR(64) NOT NULL,
  amount_fen         BIGINT NOT NULL CHECK (amount_fen > 0),
  total_fen          BIGINT NOT NULL CHECK (total_fen > 0),
  -- 1: the payment the order is PAID by (the order goes REFUNDING, then REFUNDED or back to
  -- PAID); 0: an extra payment (a double payment), the order is left as it is
  own_payment        SMALLINT NOT NULL CHECK (own_payment IN (0, 1)),
  status             VARCHAR(16) NOT NULL CHECK (status IN ('requested','processing','succeeded','failed')),
  platform_refund_id VARCHAR(64),
  attempts           BIGINT NOT NULL DEFAULT 0,
  -- while one agent thread sends the refund to the platform: nobody else sends it
  sending_until      BIGINT,
  last_error         TEXT,
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL,
  finished_at        BIGINT,
  FOREIGN KEY (compensation_id) REFERENCES compensations (id),
  FOREIGN KEY (order_no) REFERENCES orders (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX refunds_status ON refunds (status, updated_at);
CREATE INDEX refunds_order ON refunds (order_no);

-- A refund that failed at the platform is a finding of its own. A column-level CHECK in
-- MariaDB lives with the column: redefining the column replaces it (DROP CONSTRAINT kind
-- would drop the UNIQUE (kind, subject) index, which is also named after the column).
ALTER TABLE findings MODIFY kind VARCHAR(32) NOT NULL CHECK (kind IN ('effect_mismatch','missing_outbox','stuck_paying','stuck_accepted','amount_mismatch','double_payment','oversold','refund_failed'));
