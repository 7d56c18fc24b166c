-- Which request owns an in_flight L1 record: a random claim handed out by begin() (and
-- renewed when a record is taken over). Heartbeats, complete() and release() compare it,
-- so a request that was taken over never overwrites or deletes its taker's record.
ALTER TABLE idempotency_keys ADD COLUMN owner VARCHAR(32);
