-- A QA run carries a lease its agent renews while the run lasts: the agent that runs it
-- (agent_id, its instance id) and until when (lease_until, ms). A run whose lease ran out
-- is abandoned — its agent died — with finished_at the moment the lease ended. Rows of the
-- payonce before this migration have no lease (0): a run left running by them is shown
-- abandoned. SQLite cannot change a CHECK: the table is rebuilt (nothing references it).
CREATE TABLE qa_runs_rebuilt (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  scenario_id TEXT    NOT NULL UNIQUE,
  kind        TEXT    NOT NULL,
  params      TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('running','passed','failed','error','abandoned')),
  progress    TEXT,
  report      TEXT,
  started_by  TEXT    NOT NULL,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  agent_id    TEXT    NOT NULL DEFAULT '',
  lease_until INTEGER NOT NULL DEFAULT 0
);
INSERT INTO qa_runs_rebuilt (id, scenario_id, kind, params, status, progress, report, started_by, started_at,
                             finished_at)
  SELECT id, scenario_id, kind, params, status, progress, report, started_by, started_at, finished_at FROM qa_runs;
DROP TABLE qa_runs;
ALTER TABLE qa_runs_rebuilt RENAME TO qa_runs;
CREATE INDEX qa_runs_status ON qa_runs (status, lease_until);
