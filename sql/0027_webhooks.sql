-- Webhooks for what happens (issue 39): endpoints of their own (`/api/webhooks`, still the notification settings'
-- `webhooks[]`), an outbox of events written in the transaction that records what happened, and one delivery row per
-- endpoint and event, worked by the job queue on an exponential schedule.
CREATE TABLE webhook_endpoints (
  id                     text PRIMARY KEY,
  tenant_id              text NOT NULL REFERENCES tenants(id),
  url                    text NOT NULL,
  description            text NOT NULL DEFAULT '',
  -- event names and wildcards (`run.*`, `*`)
  events                 text[] NOT NULL,
  enabled                boolean NOT NULL DEFAULT true,
  -- why it was disabled when svc disabled it (410, failing for days); null when a person did, or it is enabled
  disabled_reason        text,
  -- sealed (AES-GCM under SVC_SECRETS_KEY, bound to the tenant and the endpoint), as the settings held them
  secret                 text NOT NULL,
  -- after a rotation, the secret before it, which signs too until previous_secret_until
  previous_secret        text,
  previous_secret_until  timestamptz,
  -- the first failed attempt since the last success: failing for SVC_WEBHOOK_DISABLE_AFTER_S disables the endpoint
  failing_since          timestamptz,
  position               integer NOT NULL DEFAULT 0,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, position);

-- Written only when some endpoint of the tenant subscribes to the event's type.
CREATE TABLE webhook_events (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id),
  type             text NOT NULL,
  -- what makes two emissions the same event (a run's end reported twice by an at-least-once hook): one row
  dedup_key        text,
  -- the body every endpoint receives: {id, type, createdAt, tenantId, data}
  payload          jsonb NOT NULL,
  -- the notification this event reports, when it is one (its deliveries count toward the notification's status)
  notification_id  text REFERENCES notifications(id) ON DELETE CASCADE,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, dedup_key)
);
CREATE INDEX webhook_events_notification ON webhook_events (notification_id) WHERE notification_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id),
  event_id         text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  url              text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_latency_ms  integer,
  last_error       text,
  next_attempt_at  timestamptz,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['webhook_endpoints', 'webhook_events', 'webhook_deliveries']) AS t;

-- The notification settings' webhooks move into the endpoints table with their sealed secrets as they are (the same
-- binding), an empty event list becoming what it meant: every notification event.
SELECT set_config('app.system', 'on', true);
INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, position)
SELECT w->>'id', s.tenant_id, w->>'url',
       CASE WHEN jsonb_array_length(coalesce(w->'events', '[]'::jsonb)) = 0
            THEN ARRAY['notify', 'run.failed', 'automation.disabled', 'workflow.paused', 'credit.low']
            ELSE ARRAY(SELECT jsonb_array_elements_text(w->'events')) END,
       w->>'secret', (ord - 1)::integer
FROM notification_settings s, jsonb_array_elements(coalesce(s.settings->'webhooks', '[]'::jsonb)) WITH ORDINALITY AS x(w, ord)
ON CONFLICT (id) DO NOTHING;
UPDATE notification_settings SET settings = settings - 'webhooks' WHERE settings ? 'webhooks';
SELECT set_config('app.system', '', true);
