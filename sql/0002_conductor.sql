-- Profiles, pools, sessions, runs and their event log, state bundles and the skill catalog. Tenant tables follow the
-- pattern of 0001: tenant_id plus a policy on app.tenant_id. The background system work of the conductor (the
-- reconcile loop, the orphaned-run sweep) runs under app.system, set only by src/db/tenant.ts withSystem().

CREATE TABLE profiles (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  name       text NOT NULL,
  id         text NOT NULL,
  spec       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE pools (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  name       text NOT NULL,
  id         text NOT NULL,
  spec       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE skills (
  tenant_id   text NOT NULL REFERENCES tenants(id),
  name        text NOT NULL,
  description text NOT NULL DEFAULT '',
  body        text NOT NULL,
  resources   jsonb NOT NULL DEFAULT '[]'::jsonb,
  source      text NOT NULL DEFAULT 'user',
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE sessions (
  id                 text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants(id),
  profile            text NOT NULL,
  runtime            text NOT NULL,
  status             text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'running', 'errored', 'shutdown')),
  runner_url         text NOT NULL,
  runtime_session_id text,
  profile_snapshot   jsonb NOT NULL,
  last_prompt        text,
  last_run_status    text,
  run_count          integer NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  last_used_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_tenant ON sessions (tenant_id, created_at DESC);

CREATE TABLE session_states (
  session_id         text PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  tenant_id          text NOT NULL REFERENCES tenants(id),
  content_type       text NOT NULL,
  runtime_session_id text NOT NULL DEFAULT '',
  bundle             bytea NOT NULL,
  updated_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runs (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  session_id  text NOT NULL,
  profile     text NOT NULL,
  parent_id   text,
  sub_task    jsonb NOT NULL,
  status      text NOT NULL CHECK (status IN ('running', 'ok', 'error', 'cancelled', 'interrupted')),
  owner_id    text NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX runs_tenant_started ON runs (tenant_id, started_at DESC, id DESC);
CREATE INDEX runs_session ON runs (session_id, started_at DESC);
CREATE INDEX runs_running_owner ON runs (owner_id) WHERE status = 'running';

CREATE TABLE run_events (
  run_id    text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq       integer NOT NULL,
  tenant_id text NOT NULL,
  event     jsonb NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- Conductor replicas: a heartbeat lease per process. Not tenant data.
CREATE TABLE conductor_leases (
  owner_id     text PRIMARY KEY,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);

-- Every tenant table gets the same guard: FORCE row-level security and one policy on app.tenant_id (or app.system).
CREATE FUNCTION svc_tenant_rls(t regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
  EXECUTE format($p$CREATE POLICY %I ON %s
    USING (tenant_id = current_setting('app.tenant_id', true) OR current_setting('app.system', true) = 'on')
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true) OR current_setting('app.system', true) = 'on')$p$,
    t::text || '_isolation', t);
END $$;

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['profiles', 'pools', 'skills', 'sessions', 'session_states', 'runs', 'run_events']) AS t;
