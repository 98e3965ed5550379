-- What a run's cost is computed from, recorded when the run starts, so whichever replica ends the run (the driver, a
-- cancel through another replica, the orphan sweep) can tell the runFinished hook: the runtime, the model the worker
-- called, and whose provider key paid for it ('platform': the operator's; 'tenant': the organisation's own key).
-- Runs from before this migration have none of them.

ALTER TABLE runs ADD COLUMN runtime text;
ALTER TABLE runs ADD COLUMN model text;
ALTER TABLE runs ADD COLUMN key_source text CHECK (key_source IN ('platform', 'tenant'));
