import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { EventPatterns, NOTIFICATION_EVENTS } from './catalogue.ts';

/**
 * A tenant's notification settings (`GET`/`PUT /api/notifications/settings`): email recipients of event notifications
 * and webhooks. The webhooks are the tenant's webhook endpoints (`/api/webhooks`, sql/0027), shown here without their
 * secrets; a PUT replaces the set (an item with an id updates that endpoint, one without creates an endpoint, an
 * endpoint left out is deleted), and its answer shows the secret of each endpoint it created, once.
 */
export { NOTIFICATION_EVENTS } from './catalogue.ts';
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** Standard Webhooks secrets: `whsec_` and the base64 of 24 to 64 random bytes. */
const SECRET = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;
export const WebhookSecret = v.pipe(v.string(), v.regex(SECRET, 'a Standard Webhooks secret: whsec_ and the base64 of 24 to 64 random bytes'));
export const WebhookUrl = v.pipe(v.string(), v.url('an http(s) URL'), v.regex(/^https?:\/\//i, 'an http(s) URL'), v.maxLength(2048));
const Email = v.pipe(v.string(), v.trim(), v.email('an email address'));
export const MAX_WEBHOOKS = 20;

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
          url: WebhookUrl,
          secret: v.optional(v.nullable(WebhookSecret)),
          // none listed: every notification event (what this list always meant)
          events: v.optional(EventPatterns, []),
          description: v.optional(v.pipe(v.string(), v.maxLength(500))),
          enabled: v.optional(v.boolean()),
        }),
      ),
      v.maxLength(MAX_WEBHOOKS, `at most ${MAX_WEBHOOKS} webhooks`),
    ),
    [],
  ),
});
export type SettingsBody = v.InferOutput<typeof SettingsBody>;

export interface EmailSettings {
  enabled: boolean;
  to: string[];
  from: string | null;
}

export const DEFAULT_EMAIL: EmailSettings = { enabled: true, to: [], from: null };

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
