-- Stripe top-ups. A checkout is one Checkout Session a tenant's owner started; it is credited at most once
-- (credited_at), whichever event reports it paid. Each Stripe event id is recorded once, so a replayed webhook
-- changes nothing. The tenant's Stripe customer (from its first paid checkout) opens the billing portal.
CREATE TABLE billing_checkouts (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  cents       bigint NOT NULL CHECK (cents > 0),
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'complete', 'expired')),
  url         text,
  customer_id text,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  credited_at timestamptz
);
CREATE INDEX billing_checkouts_tenant ON billing_checkouts (tenant_id, created_at);

CREATE TABLE billing_events (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id),
  type        text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

SELECT svc_tenant_rls(t::regclass) FROM unnest(ARRAY['billing_checkouts', 'billing_events']) AS t;
