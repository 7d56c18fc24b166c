-- A fence epoch is handed out whenever a key-store instance needs one, not once per
-- instance: a Redis that comes back below the largest epoch (a failback), or whose fence
-- state was lost or restored, gets a new one. So instance_id is no longer unique, and each
-- row says why it was handed out. SQLite cannot drop a constraint: the table is rebuilt
-- (AUTOINCREMENT keeps counting from the largest epoch copied over).
CREATE TABLE fence_epochs_new (
  epoch       INTEGER PRIMARY KEY AUTOINCREMENT,
  instance_id TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  created_at  INTEGER NOT NULL
);
INSERT INTO fence_epochs_new (epoch, instance_id, reason, created_at)
  SELECT epoch, instance_id, 'first_seen', created_at FROM fence_epochs;
DROP TABLE fence_epochs;
ALTER TABLE fence_epochs_new RENAME TO fence_epochs;
CREATE INDEX fence_epochs_instance ON fence_epochs (instance_id);
