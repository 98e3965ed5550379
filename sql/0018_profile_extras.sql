-- Profiles' whole lifecycle, notifications that arrive, pods (issue 23).
--
-- Profiles and pools (pods in variant B) can be pinned: lists put pinned ones first. A profile keeps its version and
-- every change (create, replace, skill attach or detach) as a row of profile_history, which goes with the profile.
ALTER TABLE profiles
  ADD COLUMN pinned_at timestamptz,
  ADD COLUMN version   integer NOT NULL DEFAULT 1;

ALTER TABLE pools
  ADD COLUMN pinned_at  timestamptz,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

CREATE TABLE profile_history (
  tenant_id    text NOT NULL,
  profile_name text NOT NULL,
  version      integer NOT NULL,
  changed_at   timestamptz NOT NULL DEFAULT now(),
  changed_by   text,
  changes      jsonb NOT NULL,
  PRIMARY KEY (tenant_id, profile_name, version),
  FOREIGN KEY (tenant_id, profile_name) REFERENCES profiles (tenant_id, name) ON DELETE CASCADE
);

-- Notifications are now delivered: by email over SMTP and to the tenant's webhooks, each delivery a job with retries.
-- A notification nobody can receive (no channel configured) is `undeliverable`, never queued forever.
ALTER TABLE notifications
  DROP CONSTRAINT notifications_status_check,
  ADD CONSTRAINT notifications_status_check CHECK (status IN ('queued', 'sent', 'failed', 'undeliverable')),
  ADD COLUMN event text NOT NULL DEFAULT 'notify';

CREATE TABLE notification_settings (
  tenant_id  text PRIMARY KEY REFERENCES tenants(id),
  settings   jsonb NOT NULL,
  updated_by text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notification_deliveries (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  notification_id text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
  channel         text NOT NULL CHECK (channel IN ('email', 'webhook')),
  -- email: the recipients, comma-separated; webhook: its URL (the webhook's id is in webhook_id)
  target          text NOT NULL,
  webhook_id      text,
  -- the order of a notification's deliveries: email first, then the webhooks in the settings' order
  position        integer NOT NULL DEFAULT 0,
  status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz
);
CREATE INDEX notification_deliveries_notification ON notification_deliveries (notification_id);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['profile_history', 'notification_settings', 'notification_deliveries']) AS t;
