-- Memory stores: named collections of small text files (entries, addressed by path) that agents read and write through
-- the toolkit's memory tools and people through /api/memory-stores, /v1/memory_stores, the dashboard and the CLI.
-- A `shared` store has one partition (''); a `per_user` store one per end user (the partition is the end-user id).
-- Size caps hold per partition. Every write appends a version (the entry's content after it, or NULL for a delete);
-- a version that is no longer the head is purged once its successor is older than the operator's retention.
CREATE TABLE memory_stores (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  name            text NOT NULL,
  description     text NOT NULL DEFAULT '',
  scope           text NOT NULL CHECK (scope IN ('shared', 'per_user')),
  max_entries     integer NOT NULL CHECK (max_entries > 0),
  max_entry_bytes integer NOT NULL CHECK (max_entry_bytes > 0),
  max_total_bytes bigint NOT NULL CHECK (max_total_bytes > 0),
  metadata        jsonb NOT NULL DEFAULT '{}',
  -- set for the store that holds an automation's memory note (one entry, /note.md)
  automation_id   text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX memory_stores_name ON memory_stores (tenant_id, name);
CREATE UNIQUE INDEX memory_stores_automation ON memory_stores (tenant_id, automation_id) WHERE automation_id IS NOT NULL;

CREATE TABLE memory_entries (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  store_id   text NOT NULL REFERENCES memory_stores(id) ON DELETE CASCADE,
  partition  text NOT NULL DEFAULT '',
  path       text NOT NULL,
  content    text NOT NULL,
  bytes      integer NOT NULL,
  sha256     text NOT NULL,
  version    integer NOT NULL,
  version_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- the words of the path weigh more than those of the content when a search ranks entries
  search     tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', translate(path, '/._-', '    ')), 'A') || setweight(to_tsvector('english', content), 'B')
  ) STORED
);
CREATE UNIQUE INDEX memory_entries_path ON memory_entries (store_id, partition, path);
CREATE INDEX memory_entries_search ON memory_entries USING gin (search);

CREATE TABLE memory_versions (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  store_id      text NOT NULL REFERENCES memory_stores(id) ON DELETE CASCADE,
  -- no foreign key: a deleted entry's history stays restorable until it is purged
  entry_id      text NOT NULL,
  partition     text NOT NULL,
  path          text NOT NULL,
  version       integer NOT NULL,
  operation     text NOT NULL CHECK (operation IN ('created', 'modified', 'renamed', 'deleted', 'restored')),
  content       text,
  bytes         integer,
  sha256        text,
  -- who wrote it: `run:<id>` (an agent's tool), `key:<id>` (an API key), `user:<subject>` (a signed-in person)
  actor         text NOT NULL,
  restored_from text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_versions_entry ON memory_versions (entry_id, version);
CREATE INDEX memory_versions_store ON memory_versions (store_id, partition, created_at DESC);
CREATE INDEX memory_versions_created ON memory_versions (created_at);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['memory_stores', 'memory_entries', 'memory_versions']) AS t;

-- What a run was given: the end user it acts for (per_user stores partition by it) and the stores its profile mounts
-- ([{name, access}]; NULL when none, which costs a plain run nothing).
ALTER TABLE runs ADD COLUMN end_user_id text;
ALTER TABLE runs ADD COLUMN memory_stores jsonb;

-- The automations' memory notes become stores of their own: one per automation that ever wrote one, holding the note
-- as its one entry /note.md (8 KB), with the note as its first version. Nothing is lost; the columns go after.
-- Row security is forced for this role too: the copy runs in system scope, which ends with this migration.
SELECT set_config('app.system', 'on', true);
INSERT INTO memory_stores (id, tenant_id, name, description, scope, max_entries, max_entry_bytes, max_total_bytes, automation_id, created_at, updated_at)
SELECT 'mst_' || a.id, a.tenant_id, 'automation-' || a.id, 'The memory note of automation ' || a.name || ', given to each of its firings.',
       'shared', 1, 8192, 8192, a.id, coalesce(a.memory_updated_at, a.created_at), coalesce(a.memory_updated_at, a.updated_at)
FROM automations a WHERE a.memory <> '' OR a.memory_updated_at IS NOT NULL;
INSERT INTO memory_entries (id, tenant_id, store_id, partition, path, content, bytes, sha256, version, version_id, created_at, updated_at)
SELECT 'mem_' || a.id, a.tenant_id, 'mst_' || a.id, '', '/note.md', a.memory, octet_length(a.memory),
       encode(sha256(convert_to(a.memory, 'UTF8')), 'hex'), 1, 'memver_' || a.id,
       coalesce(a.memory_updated_at, a.created_at), coalesce(a.memory_updated_at, a.updated_at)
FROM automations a WHERE a.memory <> '' OR a.memory_updated_at IS NOT NULL;
INSERT INTO memory_versions (id, tenant_id, store_id, entry_id, partition, path, version, operation, content, bytes, sha256, actor, created_at)
SELECT e.version_id, e.tenant_id, e.store_id, e.id, '', e.path, 1, 'created', e.content, e.bytes, e.sha256, 'migration', e.updated_at
FROM memory_entries e JOIN memory_stores s ON s.id = e.store_id WHERE s.automation_id IS NOT NULL;
SELECT set_config('app.system', '', true);
ALTER TABLE automations DROP COLUMN memory, DROP COLUMN memory_updated_at;
