-- Input events (messages, tool results, cancels) that a conductor replica received for a session whose turn another
-- replica drives: the receiving replica writes them here and NOTIFYs; the driver claims the row, applies the events
-- to its live turn and writes its answer (null: applied; else the error to answer the client with), which the
-- receiving replica reads back and answers with. Rows live for the length of one request.
CREATE TABLE agent_session_inbox (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  session_id  text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  events      jsonb NOT NULL,
  claimed_by  text,
  answered    boolean NOT NULL DEFAULT false,
  error       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_session_inbox_created ON agent_session_inbox (created_at);

SELECT svc_tenant_rls('agent_session_inbox'::regclass);
