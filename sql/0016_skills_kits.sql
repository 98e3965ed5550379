-- Skills that install like packages (seed 000 "Skills catalog, templates and kits"): a skill now carries its
-- package metadata and files; imports are staged (dry run, then commit by staging id) in PostgreSQL, so the two calls
-- may reach two conductors; deleting a platform skill leaves a tombstone so the boot seeding does not restore it.
ALTER TABLE skills
  ADD COLUMN license          text,
  ADD COLUMN compatibility    text,
  ADD COLUMN allowed_tools    jsonb NOT NULL DEFAULT '[]'::jsonb,
  ADD COLUMN metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN requires_sandbox boolean NOT NULL DEFAULT false,
  ADD COLUMN total_bytes      bigint NOT NULL DEFAULT 0,
  ADD COLUMN updated_at       timestamptz NOT NULL DEFAULT now(),
  ADD CONSTRAINT skills_source CHECK (source IN ('user', 'imported', 'platform'));

-- The bytes of a skill's resources (SKILL.md itself is `skills.body`); they go with their skill.
CREATE TABLE skill_files (
  tenant_id  text NOT NULL,
  skill_name text NOT NULL,
  path       text NOT NULL,
  content    bytea NOT NULL,
  executable boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, skill_name, path),
  FOREIGN KEY (tenant_id, skill_name) REFERENCES skills (tenant_id, name) ON DELETE CASCADE
);

-- A dry run's package, kept until it is committed (then deleted) or it expires.
CREATE TABLE skill_imports (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  package    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX skill_imports_expiry ON skill_imports (expires_at);

CREATE TABLE skill_import_files (
  import_id  text NOT NULL REFERENCES skill_imports(id) ON DELETE CASCADE,
  tenant_id  text NOT NULL,
  path       text NOT NULL,
  content    bytea NOT NULL,
  executable boolean NOT NULL DEFAULT false,
  PRIMARY KEY (import_id, path)
);

CREATE TABLE skill_tombstones (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  name       text NOT NULL,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['skill_files', 'skill_imports', 'skill_import_files', 'skill_tombstones']) AS t;

-- Kits (API spelling: templates): a sanitized snapshot of a pool, agent (profile) or automation with what it needs.
-- A kit is shared by its public id (`kit-…`) or by slug (per tenant; `org=` disambiguates), so reading crosses
-- tenants: the read policy also opens a row when the transaction sets app.kit_read (kits.repo.ts, reads only). The
-- snapshot holds no secret by construction (sanitized when taken), so a cross-tenant read shows nothing private.
CREATE TABLE kits (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  slug          text NOT NULL,
  label         text NOT NULL,
  description   text NOT NULL DEFAULT '',
  kind          text NOT NULL CHECK (kind IN ('pool', 'agent', 'automation')),
  source_name   text NOT NULL,
  version       integer NOT NULL DEFAULT 1,
  manifest      jsonb NOT NULL,
  built_in      boolean NOT NULL DEFAULT false,
  author_handle text NOT NULL,
  author_name   text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  deleted_at    timestamptz
);
CREATE UNIQUE INDEX kits_slug ON kits (tenant_id, slug) WHERE deleted_at IS NULL;
CREATE INDEX kits_slug_any ON kits (slug);
ALTER TABLE kits ENABLE ROW LEVEL SECURITY;
ALTER TABLE kits FORCE ROW LEVEL SECURITY;
CREATE POLICY kits_isolation ON kits
  USING (tenant_id = current_setting('app.tenant_id', true) OR current_setting('app.system', true) = 'on')
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true) OR current_setting('app.system', true) = 'on');
CREATE POLICY kits_shared_read ON kits FOR SELECT USING (current_setting('app.kit_read', true) = 'on');

-- Which kits a tenant copied, and the manifest it copied (the copy plan compares against it).
CREATE TABLE kit_copies (
  tenant_id   text NOT NULL REFERENCES tenants(id),
  kit_id      text NOT NULL REFERENCES kits(id),
  target_name text NOT NULL,
  version     integer NOT NULL,
  created     jsonb NOT NULL DEFAULT '[]'::jsonb,
  copied_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, kit_id, target_name)
);
SELECT svc_tenant_rls('kit_copies'::regclass);

-- View and click log of a kit's share page. Not a tenant table: the public route has no tenant, and a row says
-- nothing about its reader beyond whether a credential came with it.
CREATE TABLE kit_events (
  id         bigserial PRIMARY KEY,
  kit_id     text NOT NULL REFERENCES kits(id),
  kind       text NOT NULL CHECK (kind IN ('view', 'click')),
  signed_in  boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kit_events_kit ON kit_events (kit_id, created_at);
