-- Retention deletes delivered events past outbox_delivered_days, oldest first by
-- delivered_at. Without this index every run read all delivered events (most of the table)
-- to find a few old ones or none.
CREATE INDEX outbox_delivered ON outbox (status, delivered_at);
