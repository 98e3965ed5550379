-- Subagents of agent sessions (seed 001 "Subagent"): spawned by the session's model through the spawn_subagent tool,
-- `active` while a turn of theirs runs, `closed` after. Each has its own runner session (its own conversation);
-- its turns are agent_turns rows with subagent_id set, its items agent_items rows with subagent_id set (the
-- session's own items are those with subagent_id NULL).
CREATE TABLE agent_subagents (
  id                text PRIMARY KEY,
  tenant_id         text NOT NULL REFERENCES tenants(id),
  session_id        text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  parent_agent_id   text NOT NULL,
  name              text,
  instructions      jsonb,
  status            text NOT NULL CHECK (status IN ('active', 'closed')),
  runner_session_id text,
  opened_at         timestamptz NOT NULL DEFAULT now(),
  closed_at         timestamptz
);
CREATE INDEX agent_subagents_session ON agent_subagents (session_id, opened_at, id);
SELECT svc_tenant_rls('agent_subagents');

ALTER TABLE agent_items ADD COLUMN subagent_id text;
CREATE INDEX agent_items_subagent ON agent_items (subagent_id, position) WHERE subagent_id IS NOT NULL;
