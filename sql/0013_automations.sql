-- Automations: a profile run on a cron schedule in a timezone, inside an optional window. next_run_at is the next
-- slot the scheduler will fire; a firing is one slot (or one run-now), unique per (automation, slot) so each slot fires
-- exactly once however many conductors tick. Run-now firings have manual = true and sit outside that key.
CREATE TABLE automations (
  id                       text PRIMARY KEY,
  tenant_id                text NOT NULL REFERENCES tenants(id),
  name                     text NOT NULL,
  profile                  text NOT NULL,
  prompt                   text NOT NULL DEFAULT '',
  cron                     text NOT NULL,
  timezone                 text NOT NULL DEFAULT 'UTC',
  start_at                 timestamptz,
  end_at                   timestamptz,
  session_mode             text NOT NULL DEFAULT 'fresh' CHECK (session_mode IN ('fresh', 'persistent')),
  overlap                  text NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'queue')),
  max_consecutive_failures integer NOT NULL DEFAULT 5 CHECK (max_consecutive_failures > 0),
  status                   text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'stopped', 'disabled')),
  next_run_at              timestamptz,
  last_fired_at            timestamptz,
  consecutive_failures     integer NOT NULL DEFAULT 0,
  session_id               text,
  memory                   text NOT NULL DEFAULT '',
  memory_updated_at        timestamptz,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  deleted_at               timestamptz
);
CREATE UNIQUE INDEX automations_name ON automations (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX automations_due ON automations (next_run_at) WHERE status = 'active' AND deleted_at IS NULL;

CREATE TABLE automation_firings (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  automation_id text NOT NULL REFERENCES automations(id),
  scheduled_for timestamptz NOT NULL,
  fired_at      timestamptz NOT NULL DEFAULT now(),
  manual        boolean NOT NULL DEFAULT false,
  outcome       text CHECK (outcome IN ('ok', 'failed', 'skipped')),
  run_id        text,
  session_id    text,
  error         text
);
CREATE UNIQUE INDEX automation_firings_slot ON automation_firings (automation_id, scheduled_for) WHERE NOT manual;
CREATE INDEX automation_firings_list ON automation_firings (tenant_id, fired_at);
CREATE INDEX automation_firings_run ON automation_firings (run_id);
CREATE INDEX automation_firings_open ON automation_firings (fired_at) WHERE outcome IS NULL;

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['automations', 'automation_firings']) AS t;
