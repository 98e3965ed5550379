import * as v from 'valibot';

/**
 * The events webhooks can subscribe to: one catalogue, documented in docs/webhooks.md (name, when, payload `data`).
 * Every body is `{id, type, createdAt, tenantId, data}`; `id` is the event's, the same across retries and endpoints.
 */
export const EVENT_CATALOGUE = [
  { type: 'notify', when: 'an agent (the notify tool) or an API caller sends a notification', data: 'the notification' },
  { type: 'run.started', when: 'a run is created', data: 'run' },
  { type: 'run.completed', when: 'a run ends ok', data: 'run' },
  { type: 'run.failed', when: 'a top-level run ends in error (a notification)', data: 'the notification' },
  { type: 'run.cancelled', when: 'a run is cancelled', data: 'run' },
  { type: 'run.approval_required', when: 'a run waits for a person to approve a tool call', data: 'run + approval' },
  { type: 'session.created', when: 'a session is created (with its first run, or on its own)', data: 'session' },
  { type: 'automation.fired', when: 'an automation fires (schedule or run-now)', data: 'firing' },
  { type: 'automation.failed', when: "an automation firing's run fails or cannot start", data: 'firing' },
  { type: 'automation.disabled', when: 'an automation is disabled after failures (a notification)', data: 'the notification' },
  { type: 'workflow.completed', when: 'a workflow run completes', data: 'workflow run' },
  { type: 'workflow.failed', when: 'a workflow run fails', data: 'workflow run' },
  { type: 'workflow.paused', when: 'a workflow run pauses on a failed node (a notification)', data: 'the notification' },
  { type: 'credit.low', when: 'a charge takes the credit under the low-credit line (a notification)', data: 'the notification' },
  { type: 'billing.spend_cap_reached', when: "a run is refused because a spend cap's window is spent (once per window)", data: 'cap window' },
  { type: 'webhook.disabled', when: 'an endpoint is disabled by svc (410, or failing for days) (a notification)', data: 'the notification' },
  { type: 'webhook.test', when: 'POST /api/webhooks/{id}/test (to that endpoint only)', data: '{message}' },
] as const;

export type EventType = (typeof EVENT_CATALOGUE)[number]['type'];
export const EVENT_TYPES: readonly string[] = EVENT_CATALOGUE.map((e) => e.type);
/** The events notifications produce: what a notification-settings webhook with no event list takes. */
export const NOTIFICATION_EVENTS = ['notify', 'run.failed', 'automation.disabled', 'workflow.paused', 'credit.low'] as const;

const FAMILIES = new Set(EVENT_TYPES.map((t) => t.split('.')[0]));

/** An event name, `<family>.*` (`run.*`) or `*`. */
export function patternProblem(p: string): string | undefined {
  if (p === '*' || EVENT_TYPES.includes(p)) return undefined;
  const family = /^([a-z_]+)\.\*$/.exec(p)?.[1];
  if (family && FAMILIES.has(family)) return undefined;
  return `unknown event "${p}": an event name (${EVENT_TYPES.join(', ')}), a family wildcard such as run.* or *`;
}

export const EventPatterns = v.pipe(
  v.array(v.pipe(v.string('an event name'), v.check((p) => patternProblem(p) === undefined, (i) => patternProblem(String(i.input))!))),
  v.maxLength(50, 'at most 50 event patterns'),
);

/** Whether `patterns` take an event of `type`. */
export function subscribes(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}
