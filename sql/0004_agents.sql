-- The /v1 agents API: saved agents, agent sessions (each one a runner session of 0002 with a snapshot of its agent),
-- their turns (each turn one or more runs), conversation items, the durable per-session event log that SSE
-- subscribers resume from, and admitted Idempotency-Keys. Tenant isolation follows the pattern of 0002.

CREATE TABLE agents (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  config     jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_tenant_created ON agents (tenant_id, created_at DESC, id DESC);

CREATE TABLE agent_sessions (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id),
  agent_id         text,
  profile_name     text NOT NULL,
  agent            jsonb NOT NULL,
  -- write-only values (session MCP authorization and headers); never echoed
  secrets          jsonb NOT NULL DEFAULT '{}'::jsonb,
  environment      jsonb NOT NULL,
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  vault_ids        jsonb NOT NULL DEFAULT '[]'::jsonb,
  status           text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'in_progress', 'requires_action', 'failed')),
  error            text,
  usage            jsonb,
  required_actions jsonb NOT NULL DEFAULT '[]'::jsonb,
  active_turn_id   text,
  event_seq        integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_active_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_sessions_tenant_created ON agent_sessions (tenant_id, created_at DESC, id DESC);
CREATE INDEX agent_sessions_agent ON agent_sessions (agent_id);

CREATE TABLE agent_turns (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  session_id   text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  agent_id     text NOT NULL,
  subagent_id  text,
  status       text NOT NULL CHECK (status IN ('queued', 'in_progress', 'waiting', 'completed', 'failed', 'cancelled')),
  error        jsonb,
  usage        jsonb,
  run_ids      jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  started_at   timestamptz,
  completed_at timestamptz
);
CREATE INDEX agent_turns_session ON agent_turns (session_id, created_at, id);

CREATE TABLE agent_items (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  session_id text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  turn_id    text NOT NULL,
  position   bigint GENERATED ALWAYS AS IDENTITY,
  item       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_items_session ON agent_items (session_id, position);

CREATE TABLE agent_session_events (
  session_id text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  seq        integer NOT NULL,
  tenant_id  text NOT NULL,
  event      jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE agent_idempotency_keys (
  session_id text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  key        text NOT NULL,
  tenant_id  text NOT NULL,
  body_hash  text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, key)
);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['agents', 'agent_sessions', 'agent_turns', 'agent_items', 'agent_session_events', 'agent_idempotency_keys']) AS t;
