-- Run ids are unique per tenant, not across tenants. A client may choose a run's id (POST /api/runs {"id"}); with one
-- global key, an id another tenant already used answered 409 "already exists", telling the caller which ids exist
-- elsewhere. Keyed by (tenant_id, id), every tenant has the whole id space to itself. The event log follows its run.

ALTER TABLE run_events DROP CONSTRAINT run_events_run_id_fkey;
ALTER TABLE run_events DROP CONSTRAINT run_events_pkey;
ALTER TABLE runs DROP CONSTRAINT runs_pkey;
ALTER TABLE runs ADD PRIMARY KEY (tenant_id, id);
ALTER TABLE run_events ADD PRIMARY KEY (tenant_id, run_id, seq);
ALTER TABLE run_events ADD CONSTRAINT run_events_run_fkey FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE;
