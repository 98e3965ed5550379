-- Notifications asked for by runs (the `notify` platform tool) and by API callers. There is no delivery provider yet:
-- rows are stored with status 'queued' and a detail saying so. Tenant isolation follows the pattern of 0002.

CREATE TABLE notifications (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  channel    text NOT NULL,
  recipient  text,
  subject    text,
  message    text NOT NULL,
  status     text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
  detail     text NOT NULL DEFAULT '',
  run_id     text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_tenant_created ON notifications (tenant_id, created_at DESC, id DESC);

SELECT svc_tenant_rls('notifications');
