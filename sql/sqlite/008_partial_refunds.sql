-- Partial refunds: a refund of the order's own payment may give back part of it (an
-- amount, and the items returned for it), several per payment up to what was paid.
-- refund_items is a JSON object {sku_id: qty} (NULL: no items); the compensation
-- carries what its proposer asked for, the refund what its settlement gives back.
-- partial_refund 1: the order stays PAID while it runs and after it; 0: the refund that
-- gives back the rest of the payment (the order goes REFUNDING, then REFUNDED or PAID),
-- or a refund of an extra payment.
ALTER TABLE compensations ADD COLUMN refund_items TEXT;
ALTER TABLE refunds ADD COLUMN refund_items TEXT;
ALTER TABLE refunds ADD COLUMN partial_refund SMALLINT NOT NULL DEFAULT 0 CHECK (partial_refund IN (0, 1));
