import * as v from 'valibot';

/**
 * Calls a run's tools make back into the conductor's `/api`, authenticated with the run token (seed 000,
 * Authentication item 4, `run_token`): `delegate` starts a child run and reads its stream, `notify` asks the
 * notification service to send a message. The conductor's notification routes validate with the same schema.
 */
export const NOTIFICATION_CHANNEL_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** Body of `POST /api/notifications`. */
export const NotificationRequest = v.object({
  channel: v.optional(v.pipe(v.string(), v.regex(NOTIFICATION_CHANNEL_PATTERN, 'a channel name such as email')), 'email'),
  to: v.optional(v.pipe(v.string(), v.minLength(1, 'a non-empty string'), v.maxLength(320, 'at most 320 characters'))),
  subject: v.optional(v.pipe(v.string(), v.maxLength(200, 'at most 200 characters'))),
  message: v.pipe(v.string(), v.minLength(1, 'a non-empty string'), v.maxLength(16_384, 'at most 16384 characters')),
});
export type NotificationRequest = v.InferInput<typeof NotificationRequest>;

/** `queued` while a delivery is pending, `sent` when every one arrived, `failed` when one gave up, `undeliverable` when no channel could take it. */
export type NotificationStatus = 'queued' | 'sent' | 'failed' | 'undeliverable';

/** One delivery of a notification: an email to its recipients or a call of one webhook, with its attempts so far. */
export interface NotificationDelivery {
  id: string;
  channel: 'email' | 'webhook';
  /** The recipients (email) or the URL (webhook). */
  target: string;
  webhookId: string | null;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  lastError: string | null;
  deliveredAt: string | null;
}

/** A stored notification as `/api/notifications` answers it. */
export interface Notification {
  id: string;
  channel: string;
  to: string | null;
  subject: string | null;
  message: string;
  status: NotificationStatus;
  /** Why the status is what it is, e.g. that no delivery provider is configured. */
  detail: string;
  /** What produced it: `notify` (the tool or an API caller), `run.failed`, `automation.disabled`, `workflow.paused`, `credit.low`. */
  event: string;
  /** The run whose tool asked for it (a run token made the request), or the run it is about. */
  runId: string | null;
  createdAt: string;
  deliveries: NotificationDelivery[];
}

/** Body of the child run a `delegate` call starts through `POST /api/runs` (a SubTask). */
export interface DelegatedRunRequest {
  profile: string;
  parentId: string;
  prompt: string;
  title?: string;
}

/** `202` answer of `POST /api/runs`. */
export interface StartedRunRef {
  runId: string;
  sessionId: string;
}

/**
 * Answer of `POST /api/runs/self/token`: a fresh token of the same run, for the one the runner presented (run token
 * rotation). A run's runner renews its token a third of the way through its life, so a run outlives any one token.
 */
export const RenewedRunToken = v.object({
  runToken: v.string(),
  /** When the new token expires (ISO 8601). */
  expiresAt: v.string(),
});
export type RenewedRunToken = v.InferOutput<typeof RenewedRunToken>;

/** A run token's `iat` and `exp` claims (seconds since the epoch), read without verifying it; undefined when it has none. */
export function runTokenTimes(token: string): { iat: number; exp: number } | undefined {
  try {
    const { iat, exp } = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat?: unknown; exp?: unknown };
    return typeof iat === 'number' && typeof exp === 'number' && exp > iat ? { iat, exp } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long a run token lives, from its own claims, in ms. The runner counts it from when the token reached it, so its
 * clock never has to agree with the conductor's.
 */
export function runTokenLifetimeMs(token: string): number | undefined {
  const t = runTokenTimes(token);
  return t && (t.exp - t.iat) * 1000;
}
