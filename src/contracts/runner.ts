/**
 * Runner wire contract (seed 000, "Runner wire API"): headers shared by the conductor's runner client and the runner
 * server. Request and response schemas for each route live beside these as they are built.
 */
/** Internal calls between roles carry SVC_INTERNAL_TOKEN as a bearer in this header. */
export const INTERNAL_TOKEN_HEADER = 'X-Svc-Internal-Token';
/** The conductor forwards the caller's tenant here; the runner scopes every lookup by it. */
export const TENANT_HEADER = 'X-Svc-Tenant';

/** Runner wire form of session status. */
export const SESSION_STATUS_CODES = { idle: 0, running: 1, errored: 2, shutdown: 3 } as const;
export type SessionStatus = keyof typeof SESSION_STATUS_CODES;

/**
 * A short-lived run token the conductor mints for each run and sends with `POST /runner/run`. The runner keeps it with
 * the session's active run; the run's tools (delegate, notify) present it to the conductor as `Bearer <token>`.
 */
export const RUN_TOKEN_HEADER = 'X-Svc-Run-Token';

/**
 * `POST /runner/run` with this header set to `1` starts an adoptable run: it outlives the connection that started it,
 * and another conductor may re-attach with `GET /runner/runs/{id}/events?after=<last stored id>` (runs/taps.ts).
 * Such a run is cancelled explicitly with `POST /runner/runs/{id}/cancel`, or when nobody re-attaches in time.
 */
export const RUN_ADOPTABLE_HEADER = 'X-Svc-Run-Adoptable';

/**
 * A runner that starts (or restarts) beside a separate conductor posts `{url}` (its public URL) here on the conductor,
 * with the internal token, so the conductors probe and restore it at once instead of at their next reconcile.
 */
export const RUNNER_ANNOUNCE_PATH = '/internal/runners/announce';
