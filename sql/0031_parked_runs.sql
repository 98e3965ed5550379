-- Parked runs (issue 40): a `general` run whose tool call waits for a person's approval leaves its runner and worker
-- (its conversation saved as the session's state bundle) and is resumed, from that call, once the approval is decided.
-- While parked, the run stays `running` (shown `waiting`), no conductor drives it, and the orphan sweep leaves it alone.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS parked_approval text;
-- how many events the log held when the run was last resumed: the runner counts a resumed run's events from 1 again,
-- so a conductor adopting it re-attaches after (stored - resumed_from)
ALTER TABLE runs ADD COLUMN IF NOT EXISTS resumed_from integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS runs_parked_idx ON runs (tenant_id, id) WHERE parked_approval IS NOT NULL;
