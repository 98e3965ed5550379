import * as v from 'valibot';
import type { Documents } from '../shared/route-doc.ts';
import type { RunEvent } from './run-event.ts';

/**
 * The resources /api answers with that several families share (a run, its events, a profile, a session, an API key, a
 * tenant), as valibot schemas: routes declare them as their documented answer (`doc({ response })`), the API reference
 * turns them into JSON Schema, and the contract tests check real answers against it. Objects allow extra keys: an
 * answer may grow.
 */

const Timestamp = v.pipe(v.string(), v.description('ISO 8601 time'));

/** The statuses a run is shown with. `waiting`: running, held by a pending approval. */
export const RunStatusSchema = v.picklist(['queued', 'running', 'waiting', 'ok', 'error', 'cancelled', 'interrupted']);

/** One event of a run, as stored and streamed: `type` and `ts` always, the other fields by type. */
export const RunEventSchema = v.object({
  type: v.pipe(
    v.string(),
    v.description(
      'queued, progress, session, session_init, assistant, thinking, tool_call, tool_output, tool_result, usage, capability_decision, capability_context_savings, capability_span, limit_exceeded, approval_required, approval_decided, result (terminal) or error (terminal)',
    ),
  ),
  ts: Timestamp,
  message: v.optional(v.pipe(v.string(), v.description('Text: an assistant delta or the whole reply, the result, the error'))),
  delta: v.optional(v.pipe(v.boolean(), v.description('On assistant events while text streams; the final assistant event has the whole text'))),
  toolCallId: v.optional(v.string()),
  toolName: v.optional(v.string()),
  input: v.optional(v.unknown()),
  output: v.optional(v.unknown()),
  isError: v.optional(v.boolean()),
  usage: v.optional(v.object({ inputTokens: v.number(), outputTokens: v.number(), cacheReadTokens: v.optional(v.number()), cacheCreateTokens: v.optional(v.number()) })),
  partId: v.optional(v.string()),
  position: v.optional(v.number()),
  reason: v.optional(v.string()),
  approvalId: v.optional(v.string()),
  expiresAt: v.optional(Timestamp),
  decision: v.optional(v.picklist(['approve', 'deny'])),
});

/** The event type every runtime emits fits the documented event (compile-time only). */
export type DocumentedRunEvent = Documents<typeof RunEventSchema, RunEvent>;

/** What a run was asked to do. */
export const SubTaskSchema = v.object({
  id: v.string(),
  profile: v.string(),
  sessionId: v.string(),
  parentId: v.optional(v.string()),
  title: v.string(),
  prompt: v.string(),
  files: v.array(v.string()),
});

/** A run as lists and `GET /api/runs/{id}` show it. */
export const RunSummarySchema = v.object({
  id: v.string(),
  subTask: SubTaskSchema,
  status: RunStatusSchema,
  startedAt: Timestamp,
  finishedAt: v.nullable(Timestamp),
  userId: v.optional(v.pipe(v.string(), v.description('The end user the run acted for, when one was named'))),
  reason: v.optional(v.pipe(v.string(), v.description('Why a run ended without finishing: `interrupted` by a newer run of its session'))),
});

/** `GET /api/runs/{id}`: the run and its events so far. */
export const RunDetailSchema = v.object({ ...RunSummarySchema.entries, events: v.array(RunEventSchema) });

/** The answer of `POST /api/runs`: the run's id and its session's; `status: queued` when it waits for its session. */
export const RunCreatedSchema = v.object({ runId: v.string(), sessionId: v.string(), status: v.optional(v.literal('queued')) });

/** A profile: the stored definition of an agent, with `pinned` and, for sandbox workers, where they would be placed. */
export const ProfileSchema = v.object({
  id: v.string(),
  name: v.string(),
  runtime: v.string(),
  model: v.optional(v.string()),
  systemPrompt: v.optional(v.string()),
  skills: v.optional(v.array(v.string())),
  tools: v.optional(v.array(v.string())),
  mcpServers: v.optional(v.array(v.object({ name: v.string() }))),
  fs: v.optional(v.record(v.string(), v.unknown())),
  network: v.optional(v.string()),
  workerMode: v.optional(v.picklist(['static', 'sandbox'])),
  workerSubstrate: v.optional(v.string()),
  workerImage: v.optional(v.string()),
  memoryStores: v.optional(v.array(v.unknown())),
  limits: v.optional(v.record(v.string(), v.number())),
  multitask: v.optional(v.string()),
  permissions: v.optional(v.record(v.string(), v.unknown())),
  approvalTimeoutSeconds: v.optional(v.number()),
  pinned: v.optional(v.boolean()),
  workerPlacement: v.optional(
    v.pipe(
      v.object({ substrate: v.nullable(v.string()), source: v.string(), servable: v.boolean(), detail: v.optional(v.string()) }),
      v.description('Read-only: where the sandbox workers of this profile would start (ignored on write)'),
    ),
  ),
});

/** A session: one conversation with its workspace, on one runner. */
export const SessionSchema = v.object({
  id: v.string(),
  profile: v.string(),
  origin: v.pipe(v.picklist(['api', 'v1']), v.description('`v1`: a session of the agents API')),
  runtime: v.string(),
  status: v.picklist(['idle', 'running', 'errored', 'shutdown']),
  createdAt: Timestamp,
  lastUsedAt: Timestamp,
  lastPrompt: v.nullable(v.string()),
  lastRunStatus: v.nullable(v.string()),
  runCount: v.number(),
  metadata: v.object({ runtimeSessionId: v.nullable(v.string()) }),
});

/** An API key as listed: never its secret. */
export const ApiKeySchema = v.object({
  id: v.string(),
  tenantId: v.string(),
  name: v.string(),
  role: v.picklist(['owner', 'admin', 'member', 'viewer']),
  prefix: v.pipe(v.string(), v.description('The first characters of the key, to recognise it')),
  createdBy: v.nullable(v.string()),
  createdAt: v.string(),
  expiresAt: v.nullable(v.string()),
  revokedAt: v.nullable(v.string()),
  status: v.picklist(['active', 'expired', 'revoked']),
});

/** A key just issued: the only answer that carries its secret (`token`). */
export const IssuedKeySchema = v.object({ ...ApiKeySchema.entries, token: v.pipe(v.string(), v.description('The key itself; shown once, never again')) });

/** A tenant as the operator's routes answer it. */
export const TenantSchema = v.object({ id: v.string(), name: v.string(), metadata: v.record(v.string(), v.unknown()), createdAt: v.string(), updatedAt: v.string(), deletedAt: v.nullable(v.string()) });
