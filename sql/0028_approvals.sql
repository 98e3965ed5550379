-- Approvals (issue 40): a toolkit call under an `ask` permission waits for a person. The pending row is written before
-- the run shows `approval_required`; a decision (or the expiry job) moves it out of `pending` exactly once. A run with
-- a pending approval is shown as `waiting` (its runs.status stays `running`, so leases and sweeps treat it as live).
CREATE TABLE approvals (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  run_id         text NOT NULL,
  session_id     text NOT NULL,
  tool_call_id   text,
  tool_name      text NOT NULL,
  input          jsonb,
  status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
  -- the decider's note, and the input as they edited it (approve only)
  message        text,
  decided_input  jsonb,
  decided_by     text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  decided_at     timestamptz,
  FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX approvals_pending ON approvals (tenant_id, created_at) WHERE status = 'pending';
CREATE INDEX approvals_run ON approvals (tenant_id, run_id);

SELECT svc_tenant_rls('approvals'::regclass);
