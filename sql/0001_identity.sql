-- Tenants and tenant API keys. Every tenant table carries tenant_id and is guarded by row-level security on the
-- per-transaction setting app.tenant_id (see src/db/tenant.ts). FORCE applies the policies to the table owner too.

CREATE TABLE tenants (
  id          text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name        text NOT NULL,
  metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz
);
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenants_isolation ON tenants
  USING (id = current_setting('app.tenant_id', true) OR current_setting('app.operator', true) = 'on')
  WITH CHECK (id = current_setting('app.tenant_id', true) OR current_setting('app.operator', true) = 'on');

CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  name         text NOT NULL,
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  key_hash     text NOT NULL UNIQUE,
  key_prefix   text NOT NULL,
  created_by   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
-- A key is found by its hash before the tenant is known: the lookup transaction sets app.key_hash and sees that row only.
CREATE POLICY api_keys_isolation ON api_keys
  USING (tenant_id = current_setting('app.tenant_id', true) OR key_hash = current_setting('app.key_hash', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- During a key lookup the key's own tenant row is visible too, so authentication is one query.
CREATE POLICY tenants_of_looked_up_key ON tenants FOR SELECT
  USING (EXISTS (SELECT 1 FROM api_keys k WHERE k.tenant_id = tenants.id AND k.key_hash = current_setting('app.key_hash', true)));

-- Authentication in one round trip: the key-lookup setting lives only for this statement's implicit transaction.
CREATE FUNCTION svc_lookup_key(p_hash text)
RETURNS TABLE (id text, tenant_id text, role text, expires_at timestamptz, revoked_at timestamptz, tenant_name text, tenant_deleted_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('app.key_hash', p_hash, true);
  RETURN QUERY
    SELECT k.id, k.tenant_id, k.role, k.expires_at, k.revoked_at, t.name, t.deleted_at
    FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
    WHERE k.key_hash = p_hash;
  PERFORM set_config('app.key_hash', '', true);
END $$;
