-- Publishing (seed 000 "Publishing"): a profile published as a chat endpoint at /chat/<slug>, the keys that open it
-- and its conversations. Unpublish is a soft delete (deleted_at): a profile has at most one active published row.
-- The gateway URL names no tenant, and a browser's CORS preflight carries no credential, so an active slug is unique
-- across tenants (which includes unique per tenant): /chat/<slug> finds its agent before any key is read.
CREATE TABLE published_agents (
  id                         text PRIMARY KEY,
  tenant_id                  text NOT NULL REFERENCES tenants(id),
  profile_name               text NOT NULL,
  slug                       text NOT NULL,
  visibility                 text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'org', 'public')),
  auth_mode                  text NOT NULL DEFAULT 'api_key' CHECK (auth_mode IN ('api_key', 'jwt')),
  allowed_origins            jsonb NOT NULL DEFAULT '[]',
  rate_limit_rpm             integer NOT NULL DEFAULT 60 CHECK (rate_limit_rpm >= 0),
  sync_max_duration_seconds  integer NOT NULL DEFAULT 60 CHECK (sync_max_duration_seconds BETWEEN 1 AND 270),
  conversation_ttl_days      integer CHECK (conversation_ttl_days > 0),
  expose_tool_events         boolean NOT NULL DEFAULT false,
  enabled                    boolean NOT NULL DEFAULT true,
  monthly_cost_cap_usd_cents bigint CHECK (monthly_cost_cap_usd_cents >= 0),
  -- authMode jwt: end-user tokens are verified against this JWKS and issuer
  jwks_url                   text,
  jwt_issuer                 text,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  deleted_at                 timestamptz,
  CHECK (auth_mode <> 'jwt' OR (jwks_url IS NOT NULL AND jwt_issuer IS NOT NULL))
);
CREATE UNIQUE INDEX published_agents_slug ON published_agents (slug) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX published_agents_profile ON published_agents (tenant_id, profile_name) WHERE deleted_at IS NULL;

-- Agent keys (`pk_<random>`), stored only as HMAC-SHA256 under the same pepper as tenant keys. Like api_keys, a key
-- is found by its hash before the tenant is known: the lookup transaction sets app.key_hash and sees that row only.
CREATE TABLE agent_keys (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  published_id text NOT NULL REFERENCES published_agents(id),
  label        text NOT NULL,
  key_hash     text NOT NULL UNIQUE,
  key_prefix   text NOT NULL,
  created_by   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX agent_keys_published ON agent_keys (tenant_id, published_id, created_at);
ALTER TABLE agent_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE agent_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY agent_keys_isolation ON agent_keys
  USING (tenant_id = current_setting('app.tenant_id', true) OR key_hash = current_setting('app.key_hash', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- A conversation is one runner session of the published agent's profile, owned by the key (or subject) that began it.
CREATE TABLE chat_conversations (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  published_id   text NOT NULL REFERENCES published_agents(id),
  owner          text NOT NULL,
  session_id     text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_active_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_conversations_published ON chat_conversations (tenant_id, published_id, last_active_at);

-- One row per gateway run: what the agent's monthly cost cap and its metrics count. Outlives a purged conversation.
CREATE TABLE chat_turns (
  run_id          text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  published_id    text NOT NULL REFERENCES published_agents(id),
  conversation_id text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_turns_published ON chat_turns (tenant_id, published_id, created_at);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['published_agents', 'chat_conversations', 'chat_turns']) AS t;

-- The gateway's slug lookup: a transaction that sets app.chat_slug sees that one active published agent (read only).
CREATE POLICY published_agents_by_slug ON published_agents FOR SELECT
  USING (deleted_at IS NULL AND slug = current_setting('app.chat_slug', true));
