-- Workflows: DAGs of agent steps. A workflow run and its nodes are rows, so any conductor can move a run on: every
-- transition locks the run row (FOR UPDATE), so two conductors never start the same node twice. A node's run is an
-- ordinary run whose id is chosen when the node is claimed, so the runFinished hook always finds its node.
-- Statuses are the seed's integer enums: run 0=pending 1=running 2=paused 3=completed 4=failed 5=cancelled;
-- node 0=pending 1=ready 2=running 3=ok 4=error 5=skipped 6=cancelled.
CREATE TABLE workflow_definitions (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  name       text NOT NULL,
  nodes      jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_definitions_list ON workflow_definitions (tenant_id, created_at);

-- A schedule starts one run of its definition per cron slot; the runs' unique (schedule, slot) key makes each slot
-- fire once however many conductors tick.
CREATE TABLE workflow_schedules (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  definition_id text NOT NULL REFERENCES workflow_definitions(id),
  cron          text NOT NULL,
  timezone      text NOT NULL DEFAULT 'UTC',
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  next_run_at   timestamptz,
  last_fired_at timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_schedules_list ON workflow_schedules (tenant_id, created_at);
CREATE INDEX workflow_schedules_due ON workflow_schedules (next_run_at) WHERE status = 'active';

CREATE TABLE workflow_runs (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  name          text NOT NULL DEFAULT '',
  definition_id text,
  schedule_id   text,
  scheduled_for timestamptz,
  input         jsonb,
  status        smallint NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 5),
  -- the last plan event's number (workflow_events.seq), moved under the row lock
  seq           bigint NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  started_at    timestamptz,
  finished_at   timestamptz,
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_runs_list ON workflow_runs (tenant_id, created_at);
CREATE UNIQUE INDEX workflow_runs_slot ON workflow_runs (schedule_id, scheduled_for) WHERE schedule_id IS NOT NULL;
-- scheduled runs a conductor claimed but did not start (the schedules' sweep)
CREATE INDEX workflow_runs_unstarted ON workflow_runs (created_at) WHERE schedule_id IS NOT NULL AND status = 0;

CREATE TABLE workflow_nodes (
  tenant_id       text NOT NULL REFERENCES tenants(id),
  workflow_run_id text NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE,
  id              text NOT NULL,
  position        integer NOT NULL,
  profile         text NOT NULL,
  prompt          text NOT NULL DEFAULT '',
  depends_on      jsonb NOT NULL DEFAULT '[]',
  on_error        text NOT NULL DEFAULT 'pause' CHECK (on_error IN ('pause', 'fail', 'continue')),
  status          smallint NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 6),
  run_id          text,
  output          text,
  error           text,
  started_at      timestamptz,
  finished_at     timestamptz,
  PRIMARY KEY (workflow_run_id, id)
);
CREATE INDEX workflow_nodes_run ON workflow_nodes (tenant_id, run_id) WHERE run_id IS NOT NULL;
CREATE INDEX workflow_nodes_running ON workflow_nodes (started_at) WHERE status = 2;

-- The plan stream: one row per run or node change, each carrying the snapshot after it (Last-Event-ID resumes).
CREATE TABLE workflow_events (
  tenant_id       text NOT NULL REFERENCES tenants(id),
  workflow_run_id text NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE,
  seq             bigint NOT NULL,
  payload         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_run_id, seq)
);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['workflow_definitions', 'workflow_schedules', 'workflow_runs', 'workflow_nodes', 'workflow_events']) AS t;
