import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import { NAME_PATTERN } from '../profiles/profile.schema.ts';
import type { Agrees, Same } from '../schema-check.ts';
import type { Automation, Firing } from './automations.repo.ts';

/** The body of POST /api/automations; PUT takes the same fields minus `name`, each optional (omitted fields keep their value). */
const instant = (field: string) =>
  v.nullable(v.pipe(v.string(`${field}: expected an ISO 8601 timestamp`), v.check((s) => !Number.isNaN(Date.parse(s)), `${field}: expected an ISO 8601 timestamp`)));

const fields = {
  profile: v.pipe(v.string('profile: expected string'), v.minLength(1, 'profile: a profile name')),
  prompt: v.pipe(v.string('prompt: expected string'), v.maxLength(100_000, 'prompt: at most 100000 characters')),
  cron: v.pipe(v.string('cron: expected string'), v.minLength(1, 'cron: a cron expression'), v.maxLength(200, 'cron: at most 200 characters')),
  timezone: v.pipe(v.string('timezone: expected string'), v.maxLength(100, 'timezone: at most 100 characters')),
  startAt: instant('startAt'),
  endAt: instant('endAt'),
  sessionMode: v.picklist(['fresh', 'persistent'], 'sessionMode: expected "fresh" or "persistent"'),
  overlap: v.picklist(['skip', 'queue'], 'overlap: expected "skip" or "queue"'),
  maxConsecutiveFailures: v.pipe(v.number('maxConsecutiveFailures: expected an integer'), v.integer('maxConsecutiveFailures: expected an integer'), v.minValue(1, 'maxConsecutiveFailures: at least 1'), v.maxValue(1000, 'maxConsecutiveFailures: at most 1000')),
};

export const CreateAutomation = v.object({
  name: v.pipe(v.string('name: expected string'), v.regex(NAME_PATTERN, 'name: letters, digits, ".", "_" and "-", at most 128')),
  profile: fields.profile,
  prompt: v.optional(fields.prompt, ''),
  cron: fields.cron,
  timezone: v.optional(fields.timezone, 'UTC'),
  startAt: v.optional(fields.startAt, null),
  endAt: v.optional(fields.endAt, null),
  sessionMode: v.optional(fields.sessionMode, 'fresh'),
  overlap: v.optional(fields.overlap, 'skip'),
  maxConsecutiveFailures: v.optional(fields.maxConsecutiveFailures, 5),
});
export type CreateAutomation = v.InferOutput<typeof CreateAutomation>;

/** `name` may be repeated unchanged (a client echoing the object back) but never changed; what only a GET shows is ignored. */
export const UpdateAutomation = v.object({
  ...readOnlyFields('id', 'status', 'nextRunAt', 'lastFiredAt', 'consecutiveFailures', 'createdAt', 'updatedAt', 'deletedAt'),
  name: v.optional(v.string('name: expected string')),
  profile: v.optional(fields.profile),
  prompt: v.optional(fields.prompt),
  cron: v.optional(fields.cron),
  timezone: v.optional(fields.timezone),
  startAt: v.optional(fields.startAt),
  endAt: v.optional(fields.endAt),
  sessionMode: v.optional(fields.sessionMode),
  overlap: v.optional(fields.overlap),
  maxConsecutiveFailures: v.optional(fields.maxConsecutiveFailures),
});
export type UpdateAutomation = v.InferOutput<typeof UpdateAutomation>;

export const ParseBody = v.object({
  text: v.pipe(v.string('text: expected string'), v.maxLength(200, 'text: at most 200 characters')),
  timezone: v.optional(v.pipe(v.string('timezone: expected string'), v.maxLength(100, 'timezone: at most 100 characters'))),
});

export const MemoryBody = v.object({ ...readOnlyFields('updatedAt'), body: v.string('body: expected string') });

/** The memory note's limit (seed 000 Limits): 8 KB of UTF-8. */
export const MEMORY_MAX_BYTES = 8 * 1024;

/** What the automation routes answer (automations.repo.ts `Automation`, `Firing`). */
const Instant = v.string();
export const AutomationView = v.object({
  id: v.string(),
  name: v.string(),
  profile: v.string(),
  prompt: v.string(),
  cron: v.string(),
  timezone: v.string(),
  startAt: v.nullable(Instant),
  endAt: v.nullable(Instant),
  sessionMode: v.picklist(['fresh', 'persistent']),
  overlap: v.picklist(['skip', 'queue']),
  maxConsecutiveFailures: v.number(),
  status: v.picklist(['active', 'stopped', 'disabled']),
  nextRunAt: v.nullable(Instant),
  lastFiredAt: v.nullable(Instant),
  consecutiveFailures: v.number(),
  createdAt: Instant,
  updatedAt: Instant,
  deletedAt: v.nullable(Instant),
});

export const FiringView = v.object({
  id: v.string(),
  automationId: v.string(),
  scheduledFor: Instant,
  firedAt: Instant,
  outcome: v.nullable(v.picklist(['ok', 'failed', 'skipped'])),
  runId: v.nullable(v.string()),
  sessionId: v.nullable(v.string()),
  error: v.nullable(v.string()),
});

/** The memory note: `updatedAt` is absent until the note is first written. */
export const MemoryNote = v.object({ body: v.string(), updatedAt: v.optional(Instant) });

export const ParseAnswer = v.object({ cron: v.string(), timezone: v.string(), description: v.string(), nextRuns: v.array(Instant) });

/** The schemas above say what the code answers (schema-check.ts). */
export type AutomationAnswersChecked = [Agrees<Same<v.InferOutput<typeof AutomationView>, Automation>>, Agrees<Same<v.InferOutput<typeof FiringView>, Firing>>];
