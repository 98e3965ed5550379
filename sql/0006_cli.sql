-- What the `svc` command-line client reads and signs in through: device-login codes, the credit ledger and the
-- monthly spend cap (billing), and connected apps. Tenant tables follow the pattern of 0001/0002: tenant_id plus a
-- policy on app.tenant_id, FORCE ROW LEVEL SECURITY.

-- Device login (`svc auth login` without a browser). A code exists before any tenant is known, so a row is visible
-- only to a transaction that names it: by the hash of its device code (the CLI polling) or by its user code (the
-- signed-in dashboard approving), the pattern of the api_keys lookup in 0001. The sweep scope sees expired rows only.
-- No key is stored here: the key is minted when the approved code is redeemed.
CREATE TABLE device_codes (
  code_hash   text PRIMARY KEY,
  user_code   text NOT NULL UNIQUE,
  label       text NOT NULL,
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
  tenant_id   text REFERENCES tenants(id),
  role        text CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  approved_by text,
  key_id      text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  decided_at  timestamptz
);
CREATE INDEX device_codes_expires ON device_codes (expires_at);
ALTER TABLE device_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE device_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY device_codes_by_code ON device_codes
  USING (
    code_hash = current_setting('app.device_code', true)
    OR user_code = current_setting('app.user_code', true)
    OR (current_setting('app.device_sweep', true) = 'on' AND expires_at < now())
  )
  WITH CHECK (code_hash = current_setting('app.device_code', true) OR user_code = current_setting('app.user_code', true));

-- The credit ledger: grants (positive) and charges (negative) in micro-USD; the balance is the sum.
CREATE TABLE credit_ledger (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id),
  kind             text NOT NULL CHECK (kind IN ('grant', 'charge', 'refund')),
  amount_micro_usd bigint NOT NULL CHECK ((kind = 'charge' AND amount_micro_usd < 0) OR (kind <> 'charge' AND amount_micro_usd > 0)),
  description      text NOT NULL DEFAULT '',
  run_id           text,
  created_by       text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_ledger_tenant ON credit_ledger (tenant_id, created_at);
-- A run is charged at most once, so a retried charge is harmless.
CREATE UNIQUE INDEX credit_ledger_run_charge ON credit_ledger (tenant_id, run_id) WHERE kind = 'charge' AND run_id IS NOT NULL;

-- The tenant's monthly spend cap; a NULL limit (or no row) means the system default applies.
CREATE TABLE spend_caps (
  tenant_id         text PRIMARY KEY REFERENCES tenants(id),
  month_limit_cents bigint CHECK (month_limit_cents >= 0),
  billing_email     text,
  updated_by        text,
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- Connected apps: third-party accounts a tenant linked (GitHub, Slack, …), exposed to runs as MCP servers.
CREATE TABLE connected_apps (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  provider        text NOT NULL,
  app_slug        text NOT NULL,
  scope           text NOT NULL DEFAULT '',
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending', 'error', 'revoked')),
  mcp_server_name text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX connected_apps_tenant ON connected_apps (tenant_id, created_at);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['credit_ledger', 'spend_caps', 'connected_apps']) AS t;
