-- L1 stores the protocol-agnostic outcome code of a completed request ("created",
-- "gateway_unavailable", ...); the HTTP layer maps it to the status, so a replay answers
-- exactly the first status with the stored body.
ALTER TABLE idempotency_keys ADD COLUMN outcome VARCHAR(64);
