import { sql } from 'kysely';
import { readWithNext, type Tx } from '../../../db/index.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';

/**
 * SQL for `webhook_endpoints` (sql/0027). Secrets are sealed at rest (AES-GCM under SVC_SECRETS_KEY) bound to the
 * tenant and the endpoint, with the binding the notification settings used, so the migration moved them as they were.
 * Every call runs in a tenant-scoped transaction.
 */
export interface Endpoint {
  id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

/** An endpoint with what signs for it: its secret, and the one before a rotation while that still signs. */
export interface SigningEndpoint extends Endpoint {
  secrets: string[];
}

const aadOf = (tenantId: string, id: string) => `notification_settings:${tenantId}:${id}`;
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

type Row = {
  id: string;
  tenant_id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  created_at: Date;
  updated_at: Date;
};

const toEndpoint = (r: Row): Endpoint => ({
  id: r.id,
  url: r.url,
  description: r.description,
  events: r.events,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  failingSince: iso(r.failing_since),
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

export async function listEndpoints(tx: Tx): Promise<Endpoint[]> {
  const rows = await tx.selectFrom('webhook_endpoints').selectAll().orderBy('position').orderBy('created_at').orderBy('id').execute();
  return (rows as Row[]).map(toEndpoint);
}

export async function getEndpoint(tx: Tx, id: string, opts: { forUpdate?: boolean } = {}): Promise<Endpoint | undefined> {
  let q = tx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = (await q.executeTakeFirst()) as Row | undefined;
  return row ? toEndpoint(row) : undefined;
}

/** The endpoint with its signing secrets (the previous one only while its overlap lasts). */
export async function getSigningEndpoint(tx: Tx, id: string, box: SecretBox): Promise<SigningEndpoint | undefined> {
  const row = (await tx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()) as Row | undefined;
  if (!row) return undefined;
  const secrets = [box.open(row.secret, aadOf(row.tenant_id, row.id))];
  if (row.previous_secret && row.previous_secret_until && new Date(row.previous_secret_until).getTime() > Date.now()) {
    secrets.push(box.open(row.previous_secret, aadOf(row.tenant_id, row.id)));
  }
  return { ...toEndpoint(row), secrets };
}

export type EnabledEndpoint = { id: string; url: string; events: string[] };
/** enabledEndpoints read ahead (readEndpointsAhead). */
export type EndpointsAhead = { rows: Promise<EnabledEndpoint[]> };

const enabledQuery = (tx: Tx, tenantId: string) =>
  tx.selectFrom('webhook_endpoints').select(['id', 'url', 'events']).where('tenant_id', '=', tenantId).where('enabled', '=', true).orderBy('position').orderBy('created_at');

/**
 * The tenant's enabled endpoints, for the outbox to match an event against (named: some callers are in system scope);
 * `ahead`: as read ahead by readEndpointsAhead.
 */
export async function enabledEndpoints(tx: Tx, tenantId: string, ahead?: EndpointsAhead): Promise<EnabledEndpoint[]> {
  return ahead ? ahead.rows : enabledQuery(tx, tenantId).execute();
}

/** enabledEndpoints held to go in one write with the transaction's next statement (the run hooks' readAhead). */
export function readEndpointsAhead(tx: Tx, tenantId: string): Promise<EndpointsAhead> {
  return readWithNext(tx, enabledQuery(tx, tenantId));
}

export interface NewEndpoint {
  id: string;
  tenantId: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  secret: string;
  position?: number;
}

export async function insertEndpoint(tx: Tx, e: NewEndpoint, box: SecretBox): Promise<Endpoint> {
  const position = e.position ?? Number((await tx.selectFrom('webhook_endpoints').select(sql<number>`coalesce(max(position) + 1, 0)`.as('p')).executeTakeFirstOrThrow()).p);
  const row = await tx
    .insertInto('webhook_endpoints')
    .values({ id: e.id, tenant_id: e.tenantId, url: e.url, description: e.description, events: e.events, enabled: e.enabled, secret: box.seal(e.secret, aadOf(e.tenantId, e.id)), position })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEndpoint(row as Row);
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  events?: string[];
  enabled?: boolean;
  position?: number;
  /** A new secret (sealed here); `previousUntil` keeps the old one signing until then. */
  secret?: { tenantId: string; value: string; previousUntil: Date | null };
  /** Disabled by svc, saying why (410, failing for days). */
  disabledReason?: string | null;
  failingSince?: Date | null;
}

export async function updateEndpoint(tx: Tx, id: string, c: EndpointChanges, box: SecretBox): Promise<Endpoint | undefined> {
  const row = await tx
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      updated_at: new Date(),
      ...(c.url !== undefined ? { url: c.url } : {}),
      ...(c.description !== undefined ? { description: c.description } : {}),
      ...(c.events !== undefined ? { events: c.events } : {}),
      ...(c.enabled !== undefined ? { enabled: c.enabled } : {}),
      ...(c.position !== undefined ? { position: c.position } : {}),
      ...(c.disabledReason !== undefined ? { disabled_reason: c.disabledReason } : {}),
      ...(c.failingSince !== undefined ? { failing_since: c.failingSince } : {}),
      ...(c.secret
        ? {
            secret: box.seal(c.secret.value, aadOf(c.secret.tenantId, id)),
            previous_secret: c.secret.previousUntil ? eb.ref('secret') : null,
            previous_secret_until: c.secret.previousUntil,
          }
        : {}),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? toEndpoint(row as Row) : undefined;
}

/** Records an attempt's outcome on the endpoint: a success clears `failing_since`, a failure sets it once. */
export async function markEndpointHealth(tx: Tx, id: string, ok: boolean): Promise<Endpoint | undefined> {
  const row = await tx
    .updateTable('webhook_endpoints')
    .set(ok ? { failing_since: null } : { failing_since: sql`coalesce(failing_since, now())` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? toEndpoint(row as Row) : undefined;
}

export async function deleteEndpoint(tx: Tx, id: string): Promise<boolean> {
  // A delivery in flight locks its row, then the endpoint's (to record its health). The delete's cascade locks them the
  // other way round unless the deliveries are locked first: without this, deleting an endpoint while one of its
  // deliveries is being recorded is a deadlock (a 500).
  await tx.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).orderBy('id').forUpdate().execute();
  const r = await tx.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
