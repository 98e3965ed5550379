-- Session artifacts (/v1 agents API, spec §1.3 and §2.8): files a turn left in a sandboxed session's workspace,
-- copied here with their bytes so they stay downloadable after the environment or the runner session is gone.
-- A deleted artifact keeps its row as a tombstone (no content) so the unchanged live file is not published again.
CREATE TABLE agent_session_artifacts (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  session_id     text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  environment_id text NOT NULL,
  turn_id        text NOT NULL,
  path           text NOT NULL,
  size_bytes     integer NOT NULL,
  sha256         text NOT NULL,
  content        bytea,
  deleted_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_session_artifacts_session ON agent_session_artifacts (session_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX agent_session_artifacts_path ON agent_session_artifacts (session_id, path, sha256);

SELECT svc_tenant_rls('agent_session_artifacts');
