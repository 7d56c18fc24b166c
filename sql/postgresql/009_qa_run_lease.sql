-- A QA run carries a lease its agent renews while the run lasts: the agent that runs it
-- (agent_id, its instance id) and until when (lease_until, ms). A run whose lease ran out
-- is abandoned — its agent died — with finished_at the moment the lease ended. Rows of the
-- payonce before this migration have no lease (0): a run left running by them is shown
-- abandoned.
ALTER TABLE qa_runs ADD COLUMN agent_id VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE qa_runs ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE qa_runs DROP CONSTRAINT qa_runs_status_check;
ALTER TABLE qa_runs ADD CONSTRAINT qa_runs_status_check CHECK (status IN ('running','passed','failed','error','abandoned'));
CREATE INDEX qa_runs_status ON qa_runs (status, lease_until);
