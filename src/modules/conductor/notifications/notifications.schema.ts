import * as v from 'valibot';
import type { Agrees, Same } from '../schema-check.ts';
import type { Notification } from '../../../contracts/run-callbacks.ts';
import type { Endpoint } from './endpoints.repo.ts';
import type { Delivery } from './deliveries.repo.ts';

/**
 * What the notification and webhook routes answer (contracts/run-callbacks.ts `Notification`, endpoints.repo.ts
 * `Endpoint`, deliveries.repo.ts `Delivery`, catalogue.ts).
 */
const Instant = v.string();

export const NotificationView = v.object({
  id: v.string(),
  channel: v.string(),
  to: v.nullable(v.string()),
  subject: v.nullable(v.string()),
  message: v.string(),
  status: v.picklist(['queued', 'sent', 'failed', 'undeliverable']),
  /** Why the status is what it is, e.g. that no delivery provider is configured. */
  detail: v.string(),
  event: v.string(),
  runId: v.nullable(v.string()),
  createdAt: Instant,
  deliveries: v.array(
    v.object({
      id: v.string(),
      channel: v.picklist(['email', 'webhook']),
      target: v.string(),
      webhookId: v.nullable(v.string()),
      status: v.picklist(['queued', 'sent', 'failed']),
      attempts: v.number(),
      lastError: v.nullable(v.string()),
      deliveredAt: v.nullable(Instant),
    }),
  ),
});

const SettingsWebhook = v.object({
  id: v.string(),
  url: v.string(),
  events: v.array(v.string()),
  description: v.string(),
  enabled: v.boolean(),
  disabledReason: v.nullable(v.string()),
  /** Only in the answer of the PUT that created the endpoint. */
  secret: v.optional(v.string()),
});

export const SettingsView = v.object({
  email: v.object({ enabled: v.boolean(), to: v.array(v.string()), from: v.nullable(v.string()) }),
  webhooks: v.array(SettingsWebhook),
});

export const EndpointView = v.object({
  id: v.string(),
  url: v.string(),
  description: v.string(),
  events: v.array(v.string()),
  enabled: v.boolean(),
  /** Why svc disabled it (a 410, or failing for days); null otherwise. */
  disabledReason: v.nullable(v.string()),
  failingSince: v.nullable(Instant),
  createdAt: Instant,
  updatedAt: Instant,
});

/** The create's answer: the endpoint and its signing secret, shown this once. */
export const CreatedEndpoint = v.object({ ...EndpointView.entries, secret: v.string() });

export const RotatedSecret = v.object({ id: v.string(), secret: v.string(), previousSecretExpiresAt: v.nullable(Instant) });

export const DeliveryView = v.object({
  id: v.string(),
  endpointId: v.string(),
  eventId: v.string(),
  event: v.string(),
  url: v.string(),
  status: v.picklist(['pending', 'delivered', 'failed']),
  attempts: v.number(),
  lastResponseCode: v.nullable(v.number()),
  lastLatencyMs: v.nullable(v.number()),
  lastError: v.nullable(v.string()),
  nextAttemptAt: v.nullable(Instant),
  deliveredAt: v.nullable(Instant),
  createdAt: Instant,
  updatedAt: Instant,
});

export const EventCatalogue = v.array(v.object({ type: v.string(), when: v.string(), data: v.string() }));

/** The schemas above say what the code answers (schema-check.ts). */
export type NotificationAnswersChecked = [
  Agrees<Same<v.InferOutput<typeof NotificationView>, Notification>>,
  Agrees<Same<v.InferOutput<typeof EndpointView>, Endpoint>>,
  Agrees<Same<v.InferOutput<typeof DeliveryView>, Delivery>>,
];
