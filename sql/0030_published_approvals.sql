-- Published agents and approvals: who may approve a call to an `ask` tool made on a published agent's chat endpoint.
-- `deny` (the default): nobody (end users cannot approve; the model reads that the call was refused); `owner`: the
-- agent's tenant, as for its other runs (the run waits, the chat stream says so).
ALTER TABLE published_agents ADD COLUMN IF NOT EXISTS approvals text NOT NULL DEFAULT 'deny' CHECK (approvals IN ('deny', 'owner'));
