import type { Tx } from '../../../db/index.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Jobs } from '../jobs/index.ts';
import { subscribes, type EventType } from './catalogue.ts';
import { insertDelivery, insertEvent, type EventPayload } from './deliveries.repo.ts';
import { enabledEndpoints } from './endpoints.repo.ts';

/**
 * The webhook outbox. A feature reports what happened by calling `emitEvent` inside the transaction that records it:
 * the event and one delivery per subscribing endpoint are written there, each delivery's first job queued there too
 * (`WEBHOOK_QUEUE`), so the event exists exactly when what it reports does; a process killed after the commit loses
 * nothing, and no replica writes it twice. A tenant with no endpoint taking the event pays one indexed read, no row.
 */
export const WEBHOOK_QUEUE = 'webhooks.deliver';

/** One attempt of one delivery: `attempt` is the number of attempts made before it (a stale job finds it moved on). */
export interface WebhookJob {
  tenantId: string;
  deliveryId: string;
  attempt: number;
}

export interface OutboxEvent {
  tenantId: string;
  type: EventType;
  data: Record<string, unknown>;
  /** Makes a second emission of the same happening a no-op (hooks deliver at least once), e.g. `run.completed:<runId>`. */
  key?: string;
  /** The notification the event reports (its deliveries count toward the notification's status). */
  notificationId?: string;
}

type Target = { id: string; url: string };

/** The tenant's enabled endpoints that take `type` (in the tenant's transaction, or a system-scope one). */
export async function subscribersOf(tx: Tx, tenantId: string, type: string): Promise<Target[]> {
  return (await enabledEndpoints(tx, tenantId)).filter((e) => subscribes(e.events, type));
}

/** What was written: the event's id and its deliveries' ids. */
export interface Emitted {
  id: string;
  deliveries: string[];
}

/** For other features: reports an event inside `tx`. Undefined when nobody takes it (or its key was emitted before). */
export async function emitEvent(jobs: Jobs, tx: Tx, e: OutboxEvent): Promise<Emitted | undefined> {
  return emitTo(jobs, tx, e, await subscribersOf(tx, e.tenantId, e.type));
}

/** Writes the event for these endpoints (none: nothing is written). */
export async function emitTo(jobs: Jobs, tx: Tx, e: OutboxEvent, targets: readonly Target[]): Promise<Emitted | undefined> {
  if (targets.length === 0) return undefined;
  const payload: EventPayload = { id: prefixedId('evt'), type: e.type, createdAt: new Date().toISOString(), tenantId: e.tenantId, data: e.data };
  if (!(await insertEvent(tx, { payload, key: e.key ?? null, notificationId: e.notificationId ?? null }))) return undefined;
  const deliveries: string[] = [];
  for (const t of targets) {
    const deliveryId = prefixedId('whd');
    deliveries.push(deliveryId);
    await insertDelivery(tx, { id: deliveryId, tenantId: e.tenantId, eventId: payload.id, endpointId: t.id, url: t.url });
    await jobs.send<WebhookJob>(WEBHOOK_QUEUE, { tenantId: e.tenantId, deliveryId, attempt: 0 }, { tx });
  }
  return { id: payload.id, deliveries };
}
