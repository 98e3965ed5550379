import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { badRequest } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';

/**
 * A tenant's notification settings (`GET`/`PUT /api/notifications/settings`): email recipients of event notifications
 * and webhooks, each signed with its own secret per the Standard Webhooks scheme and limited to some events (none
 * listed: every event).
 */
export const NOTIFICATION_EVENTS = ['notify', 'run.failed', 'automation.disabled', 'workflow.paused', 'credit.low'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** Standard Webhooks secrets: `whsec_` and the base64 of 24 to 64 random bytes. */
const SECRET = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;
const Email = v.pipe(v.string(), v.trim(), v.email('an email address'));
const MAX_WEBHOOKS = 20;

export const SettingsBody = v.object({
  email: v.optional(
    v.object({
      enabled: v.optional(v.boolean(), true),
      to: v.optional(v.pipe(v.array(Email), v.maxLength(50, 'at most 50 recipients')), []),
      from: v.optional(v.nullable(Email), null),
    }),
    { enabled: true, to: [], from: null },
  ),
  webhooks: v.optional(
    v.pipe(
      v.array(
        v.object({
          id: v.optional(v.pipe(v.string(), v.regex(/^whk_[A-Za-z0-9_-]{1,64}$/, 'an id of the form whk_…'))),
          url: v.pipe(v.string(), v.url('an http(s) URL'), v.regex(/^https?:\/\//i, 'an http(s) URL'), v.maxLength(2048)),
          secret: v.optional(v.pipe(v.string(), v.regex(SECRET, 'a Standard Webhooks secret: whsec_ and the base64 of 24 to 64 random bytes'))),
          events: v.optional(v.array(v.picklist(NOTIFICATION_EVENTS, `one of ${NOTIFICATION_EVENTS.join(', ')}`)), []),
        }),
      ),
      v.maxLength(MAX_WEBHOOKS, `at most ${MAX_WEBHOOKS} webhooks`),
    ),
    [],
  ),
});
export type SettingsBody = v.InferOutput<typeof SettingsBody>;

export interface Webhook {
  id: string;
  url: string;
  secret: string;
  events: NotificationEvent[];
}
export interface NotificationSettings {
  email: { enabled: boolean; to: string[]; from: string | null };
  webhooks: Webhook[];
}

export const DEFAULT_SETTINGS: NotificationSettings = { email: { enabled: true, to: [], from: null }, webhooks: [] };

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * The settings a PUT stores: a webhook without an id gets one, without a secret gets a new one, or keeps its secret
 * when it names the id of a webhook that already has one (so a client can send back what GET showed it).
 */
export function settingsToStore(body: SettingsBody, before: NotificationSettings): NotificationSettings {
  const ids = new Set<string>();
  const webhooks = body.webhooks.map((w) => {
    const id = w.id ?? prefixedId('whk');
    if (ids.has(id)) throw badRequest(`webhooks: id ${id} appears twice`);
    ids.add(id);
    const secret = w.secret ?? before.webhooks.find((b) => b.id === id)?.secret ?? newWebhookSecret();
    return { id, url: w.url, secret, events: [...new Set(w.events)] };
  });
  return { email: { ...body.email, to: [...new Set(body.email.to)] }, webhooks };
}

/** Whether a webhook takes an event (an empty list takes every event). */
export const webhookWants = (w: Webhook, event: string) => w.events.length === 0 || (w.events as string[]).includes(event);
