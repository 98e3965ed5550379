import * as v from 'valibot';
import type { Tx } from '../../../db/index.ts';
import { checkUrl } from '../../../shared/egress/index.ts';
import { badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { EventPatterns, NOTIFICATION_EVENTS } from './catalogue.ts';
import { deleteEndpoint, getEndpoint, insertEndpoint, listEndpoints, updateEndpoint, type Endpoint } from './endpoints.repo.ts';
import type { NotifyDeps } from './notify.service.ts';
import { MAX_WEBHOOKS, newWebhookSecret, WebhookSecret, WebhookUrl, type SettingsBody } from './settings.schema.ts';

/**
 * Webhook endpoints (`/api/webhooks`, and the notification settings' `webhooks[]`): create, change, rotate, delete.
 * A secret is shown once, in the answer that made it; the address policy judges each URL as written (and the
 * guarded fetcher again at every delivery, on what the name resolves to).
 */
const Description = v.pipe(v.string(), v.maxLength(500, 'at most 500 characters'));

export const CreateBody = v.object({
  url: WebhookUrl,
  events: v.pipe(EventPatterns, v.minLength(1, 'at least one event name or wildcard (run.*, *)')),
  description: v.optional(Description, ''),
  enabled: v.optional(v.boolean(), true),
  /** Bring your own (a migration from another sender); generated otherwise. */
  secret: v.optional(WebhookSecret),
});

export const PatchBody = v.strictObject({
  url: v.optional(WebhookUrl),
  events: v.optional(v.pipe(EventPatterns, v.minLength(1, 'at least one event name or wildcard (run.*, *)'))),
  description: v.optional(Description),
  enabled: v.optional(v.boolean()),
});

export const RotateBody = v.object({
  /** How long the old secret signs too (default SVC_WEBHOOK_ROTATION_OVERLAP_S); 0 ends it at once. */
  overlapSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(30 * 86_400))),
});

/** The address policy as written: 400 naming the field. */
function checkAddress(deps: Pick<NotifyDeps, 'privateAddresses'>, url: string, field: string): void {
  const problem = checkUrl(url, deps.privateAddresses ?? 'allow');
  if (problem) throw badRequest(`${field}: ${problem}`);
}

export async function createEndpoint(deps: NotifyDeps, tx: Tx, tenantId: string, body: v.InferOutput<typeof CreateBody>): Promise<Endpoint & { secret: string }> {
  checkAddress(deps, body.url, 'url');
  if ((await listEndpoints(tx)).length >= MAX_WEBHOOKS) throw conflict(`at most ${MAX_WEBHOOKS} webhook endpoints per tenant; delete one first`);
  const secret = body.secret ?? newWebhookSecret();
  const e = await insertEndpoint(tx, { id: prefixedId('whk'), tenantId, url: body.url, description: body.description, events: [...new Set(body.events)], enabled: body.enabled, secret }, deps.box);
  return { ...e, secret };
}

export async function changeEndpoint(deps: NotifyDeps, tx: Tx, id: string, body: v.InferOutput<typeof PatchBody>): Promise<Endpoint> {
  if (body.url !== undefined) checkAddress(deps, body.url, 'url');
  const before = await getEndpoint(tx, id, { forUpdate: true });
  if (!before) throw notFound(`unknown webhook: ${id}`);
  // enabling it again starts its failure clock afresh and forgets why svc disabled it
  const enabling = body.enabled === true && !before.enabled;
  return (await updateEndpoint(tx, id, { ...body, ...(body.events ? { events: [...new Set(body.events)] } : {}), ...(enabling ? { disabledReason: null, failingSince: null } : {}) }, deps.box))!;
}

export async function rotateSecret(deps: NotifyDeps, tx: Tx, tenantId: string, id: string, overlapSeconds?: number): Promise<{ id: string; secret: string; previousSecretExpiresAt: string | null }> {
  if (!(await getEndpoint(tx, id, { forUpdate: true }))) throw notFound(`unknown webhook: ${id}`);
  const overlap = overlapSeconds ?? deps.config.webhookRotationOverlapSeconds;
  const previousUntil = overlap > 0 ? new Date(Date.now() + overlap * 1000) : null;
  const secret = newWebhookSecret();
  await updateEndpoint(tx, id, { secret: { tenantId, value: secret, previousUntil } }, deps.box);
  return { id, secret, previousSecretExpiresAt: previousUntil?.toISOString() ?? null };
}

export async function removeEndpoint(tx: Tx, id: string): Promise<void> {
  if (!(await deleteEndpoint(tx, id))) throw notFound(`unknown webhook: ${id}`);
}

/** A webhook as the notification settings show it (never its secret). */
export const settingsWebhook = (e: Endpoint) => ({ id: e.id, url: e.url, events: e.events, description: e.description, enabled: e.enabled, disabledReason: e.disabledReason });

/**
 * The settings' `webhooks[]` written: the set becomes these (updated in place by id, created without one, the rest
 * deleted; an id this tenant has no endpoint of makes a new one, with a new id). Answers the endpoints in order, each created one with its secret (shown this once).
 */
export async function replaceFromSettings(deps: NotifyDeps, tx: Tx, tenantId: string, items: SettingsBody['webhooks']) {
  items.forEach((w, i) => checkAddress(deps, w.url, `webhooks.${i}.url`));
  const ids = new Set<string>();
  for (const w of items) {
    if (w.id && ids.has(w.id)) throw badRequest(`webhooks: id ${w.id} appears twice`);
    if (w.id) ids.add(w.id);
  }
  const before = await listEndpoints(tx);
  for (const e of before) if (!ids.has(e.id)) await deleteEndpoint(tx, e.id);
  const out: Array<ReturnType<typeof settingsWebhook> & { secret?: string }> = [];
  for (const [position, w] of items.entries()) {
    const events = w.events.length ? [...new Set(w.events)] : [...NOTIFICATION_EVENTS];
    const existing = w.id ? before.find((e) => e.id === w.id) : undefined;
    if (existing) {
      const changed = await updateEndpoint(
        tx,
        existing.id,
        {
          url: w.url,
          events,
          position,
          ...(w.description !== undefined ? { description: w.description } : {}),
          ...(w.enabled !== undefined ? { enabled: w.enabled } : {}),
          ...(w.secret ? { secret: { tenantId, value: w.secret, previousUntil: null } } : {}),
        },
        deps.box,
      );
      out.push(settingsWebhook(changed!));
    } else {
      const secret = w.secret ?? newWebhookSecret();
      const e = await insertEndpoint(tx, { id: prefixedId('whk'), tenantId, url: w.url, description: w.description ?? '', events, enabled: w.enabled ?? true, secret, position }, deps.box);
      out.push({ ...settingsWebhook(e), secret });
    }
  }
  return out;
}
