-- A tenant's sandbox ceilings (PUT /api/tenants/{id}/limits): what the operator allows this tenant's agents at most,
-- per key of src/contracts/sandbox-limits.ts (`{"memoryMiB": 512, "pids": 128}`), within the operator's own ceilings.
-- Empty: the operator's ceilings alone. On the tenants row, so the tenant's own transactions read it (profiles and
-- sessions are checked against it) under the row policy that already guards the row.
ALTER TABLE tenants ADD COLUMN sandbox_limits jsonb NOT NULL DEFAULT '{}'::jsonb;
