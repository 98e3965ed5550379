-- Input events (messages, tool results, cancels) that a conductor replica received for a session whose turn another
-- replica drives, or a function call a worker made to such a replica: the receiving replica writes them here and
-- NOTIFYs; the driver claims the row, applies the events to its live turn (or announces the call and waits for its
-- tool_result) and writes its answer (`error`: the 4xx to answer the client with; `result`: the call's answer), which
-- the receiving replica reads back and answers with. Rows live for the length of one request.
CREATE TABLE agent_session_inbox (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  session_id  text NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
  events      jsonb,
  call        jsonb,
  result      jsonb,
  claimed_by  text,
  answered    boolean NOT NULL DEFAULT false,
  error       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_session_inbox_created ON agent_session_inbox (created_at);

SELECT svc_tenant_rls('agent_session_inbox'::regclass);
