-- Resources of the /v1 agents API besides agents and sessions: Files, Skills (immutable versions stored as zip
-- archives), vaults and their credentials, environment templates, environments with their workspace files, and the
-- tenant's own model-provider keys. Secrets (credential tokens, provider keys, template/environment env and setup
-- commands) are stored only sealed (AES-256-GCM, see src/modules/agents-api/secret-box.ts). Tenant isolation follows
-- 0002: tenant_id plus a policy on app.tenant_id (or app.system), FORCE ROW LEVEL SECURITY.

CREATE TABLE agent_files (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  filename   text NOT NULL,
  purpose    text NOT NULL,
  bytes      integer NOT NULL,
  content    bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz
);
CREATE INDEX agent_files_tenant ON agent_files (tenant_id, created_at DESC, id DESC);

CREATE TABLE agent_skills (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  default_version integer NOT NULL,
  latest_version  integer NOT NULL,
  next_version    integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_skills_tenant ON agent_skills (tenant_id, created_at DESC, id DESC);

CREATE TABLE agent_skill_versions (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  skill_id    text NOT NULL REFERENCES agent_skills(id) ON DELETE CASCADE,
  version     integer NOT NULL,
  name        text NOT NULL,
  description text NOT NULL,
  archive     bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (skill_id, version)
);

CREATE TABLE vaults (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  name       text,
  metadata   jsonb NOT NULL DEFAULT '{}'::jsonb,
  status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vaults_tenant ON vaults (tenant_id, created_at DESC, id DESC);

CREATE TABLE vault_credentials (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  vault_id    text NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
  name        text NOT NULL,
  auth        jsonb NOT NULL,
  sealed      text NOT NULL,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vault_credentials_vault ON vault_credentials (vault_id, created_at DESC, id DESC);

CREATE TABLE environment_templates (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  name       text,
  spec       jsonb NOT NULL,
  sealed     text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX environment_templates_tenant ON environment_templates (tenant_id, created_at DESC, id DESC);

CREATE TABLE agent_environments (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id),
  session_id          text,
  type                text NOT NULL CHECK (type IN ('openai_hosted', 'self_hosted')),
  status              text NOT NULL CHECK (status IN ('pending', 'connected', 'disconnected', 'expired', 'failed')),
  workspace_directory text NOT NULL DEFAULT '/workspace',
  spec                jsonb NOT NULL,
  sealed              text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_environments_session ON agent_environments (session_id);

CREATE TABLE agent_environment_files (
  environment_id text NOT NULL REFERENCES agent_environments(id) ON DELETE CASCADE,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  path           text NOT NULL,
  content        bytea NOT NULL,
  size_bytes     integer NOT NULL,
  file_id        text,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (environment_id, path)
);

CREATE TABLE provider_keys (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  provider   text NOT NULL,
  sealed     text NOT NULL,
  key_hint   text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, provider)
);

-- Usage is summed from run `usage` events; this index keeps the per-tenant scan of run_events narrow.
CREATE INDEX IF NOT EXISTS run_events_tenant_usage ON run_events (tenant_id) WHERE event->>'type' = 'usage';

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['agent_files', 'agent_skills', 'agent_skill_versions', 'vaults', 'vault_credentials', 'environment_templates', 'agent_environments', 'agent_environment_files', 'provider_keys']) AS t;
