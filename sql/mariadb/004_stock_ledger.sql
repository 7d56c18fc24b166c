-- The stock ledger is each order's own, net, append-only history: every entry is keyed
-- (order_no, sku_id, entry_key) — 'take' for what the paid transaction took,
-- 'reversal:<compensation id>' for a restore_stock, 'refund:<refund_no>' for a refund —
-- with the reason it was written. Give-backs used to be written under those keys as
-- order numbers of their own, where no sum over the order saw them, so one unit could be
-- given back twice; the ones already written move to the order they belong to.
ALTER TABLE stock_log ADD COLUMN entry_key VARCHAR(96) NOT NULL DEFAULT 'take',
                      ADD COLUMN reason VARCHAR(32) NOT NULL DEFAULT 'paid';
UPDATE stock_log SET entry_key = order_no, reason = 'restore_stock' WHERE order_no LIKE 'reversal:%';
UPDATE stock_log SET entry_key = order_no, reason = 'refund' WHERE order_no LIKE 'refund:%';
-- The new key before the rows move: (order_no, sku_id) alone would collide with the take.
ALTER TABLE stock_log DROP INDEX order_no, ADD UNIQUE KEY stock_log_entry (order_no, sku_id, entry_key);
UPDATE stock_log s JOIN compensations c ON s.entry_key = CONCAT('reversal:', c.id) SET s.order_no = c.order_no;
UPDATE stock_log s JOIN refunds r ON s.entry_key = CONCAT('refund:', r.refund_no) SET s.order_no = r.order_no;
