-- A fence epoch is handed out whenever a key-store instance needs one, not once per
-- instance: a Redis that comes back below the largest epoch (a failback), or whose fence
-- state was lost or restored, gets a new one. So instance_id is no longer unique, and each
-- row says why it was handed out.
ALTER TABLE fence_epochs DROP INDEX instance_id,
  ADD COLUMN reason VARCHAR(32) NOT NULL DEFAULT 'first_seen',
  ADD INDEX fence_epochs_instance (instance_id);
ALTER TABLE fence_epochs ALTER COLUMN reason DROP DEFAULT;
