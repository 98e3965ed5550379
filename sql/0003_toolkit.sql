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

ALTER TABLE notifications ENABLE ROW LEVEL SECURITY;
ALTER TABLE notifications FORCE ROW LEVEL SECURITY;
CREATE POLICY notifications_isolation ON notifications
  USING (tenant_id = current_setting('app.tenant_id', true) OR current_setting('app.system', true) = 'on')
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true) OR current_setting('app.system', true) = 'on');
