-- The out_trade_no a callback log row pays (the payment record's payment_no). A row the
-- patrol or the order closer writes from the platform's query has no delivery to verify
-- again; the callback worker settles it by querying the platform for this number. Rows
-- written before this migration have none: the worker falls back to the order's payment
-- records of the row's channel.
ALTER TABLE pay_callback_log ADD COLUMN payment_no VARCHAR(64);
