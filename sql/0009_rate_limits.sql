-- Request counters of the shared rate limiter (src/modules/conductor/limits/), kept in PostgreSQL so a limit holds
-- across conductor replicas: N replicas must not admit N times the limit. One row per (scope, key) and window: the
-- window opens at the first request and resets once `resets_at` has passed (the fixed windows the /v1 limits had).
--
-- UNLOGGED: a counter need not survive a crash (losing one resets a window early) and skipping the WAL halves the
-- cost of the upsert every limited request makes. No index but the key, so the upsert stays a HOT update; the purge
-- of expired rows scans a table no larger than the number of active keys. No tenant_id column: keys are opaque
-- strings made by the caller, read and written only by the limiter, never served.
CREATE UNLOGGED TABLE rate_limits (
  scope text NOT NULL,
  key text NOT NULL,
  hits integer NOT NULL,
  resets_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
) WITH (fillfactor = 70);
