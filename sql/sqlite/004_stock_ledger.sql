-- The stock ledger is each order's own, net, append-only history: every entry is keyed
-- (order_no, sku_id, entry_key) — 'take' for what the paid transaction took,
-- 'reversal:<compensation id>' for a restore_stock, 'refund:<refund_no>' for a refund —
-- with the reason it was written. Give-backs used to be written under those keys as
-- order numbers of their own, where no sum over the order saw them, so one unit could be
-- given back twice. SQLite cannot change a UNIQUE constraint: the table is rebuilt, and
-- the give-backs already written move to the order they belong to.
CREATE TABLE stock_log_rebuilt (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no   TEXT    NOT NULL,
  sku_id     TEXT    NOT NULL,
  entry_key  TEXT    NOT NULL DEFAULT 'take',
  reason     TEXT    NOT NULL DEFAULT 'paid',
  qty        INTEGER NOT NULL,
  fence      INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (order_no, sku_id, entry_key)
);
INSERT INTO stock_log_rebuilt (id, order_no, sku_id, entry_key, reason, qty, fence, created_at)
  SELECT id, order_no, sku_id, 'take', 'paid', qty, fence, created_at FROM stock_log
  WHERE order_no NOT LIKE 'reversal:%' AND order_no NOT LIKE 'refund:%';
INSERT INTO stock_log_rebuilt (id, order_no, sku_id, entry_key, reason, qty, fence, created_at)
  SELECT s.id, c.order_no, s.sku_id, s.order_no, 'restore_stock', s.qty, s.fence, s.created_at
  FROM stock_log s JOIN compensations c ON s.order_no = 'reversal:' || c.id;
INSERT INTO stock_log_rebuilt (id, order_no, sku_id, entry_key, reason, qty, fence, created_at)
  SELECT s.id, r.order_no, s.sku_id, s.order_no, 'refund', s.qty, s.fence, s.created_at
  FROM stock_log s JOIN refunds r ON s.order_no = 'refund:' || r.refund_no;
DROP TABLE stock_log;
ALTER TABLE stock_log_rebuilt RENAME TO stock_log;
