-- Busy sessions: a run posted to a session that has one in progress may wait its turn (`multitask: "enqueue"`) or
-- interrupt it (`"interrupt"`). A waiting run is a row in status `queued`, started in order when the session frees
-- up, by whichever conductor sees it first (so it survives a restart).
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('queued', 'running', 'ok', 'error', 'cancelled', 'interrupted'));

-- how the run was posted to a busy session (`enqueue`, `interrupt`); null for a run that started at once
ALTER TABLE runs ADD COLUMN IF NOT EXISTS multitask text;
-- why a run was stopped, where its status alone does not say: `interrupted` (cancelled by a run posted with
-- `multitask: "interrupt"`)
ALTER TABLE runs ADD COLUMN IF NOT EXISTS end_reason text;

-- the next queued run of a session: an interrupting run first, then in the order they were posted
CREATE INDEX IF NOT EXISTS runs_queued_idx ON runs (session_id, started_at) WHERE status = 'queued';
