import { doc, type Documents } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { sseFrameText, sseResponse } from '../../../shared/sse.ts';
import { ndjsonStream } from '../../../shared/ndjson.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { IdentityEnv } from '../identity/index.ts';
import * as v from 'valibot';
import { RunCreatedSchema, RunDetailSchema, RunStatusSchema, RunSummarySchema } from '../../../contracts/api-resources.ts';
import { inTenant, pageOf, PageQuery, sendList } from '../../crud/index.ts';
import { cancelRun, terminateRun } from './cancel.ts';
import { followRun } from './follow.ts';
import type { Hub, StoredEvent } from './hub.ts';
import { eventsAfter, RUN_STATUSES, runtimeSessionIdOf, type ShownRunStatus } from './runs.repo.ts';
import type { RunSummary } from './runs.repo.ts';
import { createRun, getRunSummary, listRunSummaries, RunBody, type RunDeps } from './runs.service.ts';
import { renewRunToken } from './run-token.ts';
import { RenewedRunToken } from '../../../contracts/run-callbacks.ts';

/**
 * `/api/runs`: create (202), list, get with the event log, cancel, force-terminate, the SSE stream, the raw event
 * stream (`/events`, NDJSON: every stored event with its `seq` and the run's `runtimeSessionId`), and the renewal of a
 * run's own token by its runner (`/self/token`, run-token.ts).
 */
/** What cancel-style answers of a run say (`POST /api/runs/{id}/terminate`). */
export const TerminateAnswer = v.object({
  runId: v.string(),
  sessionId: v.optional(v.string()),
  cancelled: v.pipe(v.boolean(), v.description('Whether this call stopped the run (false: it had already ended)')),
  sessionReleased: v.boolean(),
  claimStolen: v.boolean(),
  statusWritten: v.boolean(),
  warnings: v.array(v.string()),
});

const ListQuery = v.object({ ...PageQuery.entries, status: v.optional(RunStatusSchema) });

export function runRoutes(deps: RunDeps & { hub: Hub; keepAliveMs: number }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post(
      '/',
      doc({
        summary: 'Start a run',
        description:
          'Starts a run of a profile on a new session, or on an existing one with `sessionId`. Answers at once with the run and session ids; follow the run with its stream. A session busy with another run answers 409 unless `multitask` says to queue or interrupt.',
        body: RunBody,
        response: RunCreatedSchema,
        status: 202,
        errors: [402, 409, 503],
      }),
      async (c) => c.json(await createRun(deps, c.get('principal').tenantId, await readJson(c, RunBody)), 202))
    .post(
      '/self/token',
      doc({
        summary: 'Renew a run token (run token)',
        description:
          "Called by a run's runner with the run's own token before it expires: answers a fresh token of the same run. Other credentials get 403; an expired or invalid token 401; a run that is not running 409.",
        response: RenewedRunToken,
        errors: [409],
      }),
      async (c) => c.json(await renewRunToken(deps, c.get('principal'))))
    .get('/', doc({ summary: 'List runs', description: 'The tenant’s runs, newest first, optionally of one status. With `limit` one page and the full count in X-Total-Count.', query: ListQuery, response: v.array(RunSummarySchema) }), async (c) => {
      const page = pageOf(c);
      const status = c.req.query('status');
      if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) throw badRequest(`status: expected one of ${RUN_STATUSES.join(', ')}`);
      return sendList(c, page, await listRunSummaries(deps, c.get('principal').tenantId, status ? { status: status as ShownRunStatus } : {}, page));
    })
    .get('/:id', doc({ summary: 'Get a run', description: 'The run, its status and every event it has emitted so far (the same events its stream carries).', response: RunDetailSchema }), async (c) => {
      const tenantId = c.get('principal').tenantId;
      const summary = await getRunSummary(deps, tenantId, c.req.param('id'));
      const events = await inTenant(deps.db, c, (tx) => eventsAfter(tx, summary.id, 0));
      return c.json({ ...summary, events: events.map((e) => publicEvent(e.event)) });
    })
    .delete('/:id', doc({ summary: 'Cancel a run', description: 'Cancels the run: a running run stops and its stream ends with its terminal event; a queued run is dropped. Cancelling a finished run changes nothing.', status: 204 }), async (c) => {
      await cancelRun(deps, c.get('principal').tenantId, c.req.param('id'));
      return c.body(null, 204);
    })
    .post(
      '/:id/terminate',
      doc({
        summary: 'Force-terminate a run',
        description: 'Stops a run that a cancel did not stop: marks it cancelled, releases its session and reports what it did, with warnings for anything it could not reach (an unknown run: `run_not_found`).',
        response: TerminateAnswer,
      }),
      async (c) => c.json(await terminateRun(deps, c.get('principal').tenantId, c.req.param('id'))))
    .get(
      '/:id/stream',
      doc({
        summary: 'Stream a run’s events',
        description:
          'Server-sent events: every event of the run from the start (or after `Last-Event-ID` / `lastEventId`), each with its sequence number as the event id, then live ones, ending with exactly one terminal event (`result` or `error`).',
        query: v.object({ lastEventId: v.optional(v.pipe(v.string(), v.regex(/^\d+$/), v.description('Resume after this event id (the Last-Event-ID header wins)'))) }),
        responds: 'text/event-stream',
      }),
      async (c) => {
      const raw = c.req.header('Last-Event-ID') ?? c.req.query('lastEventId') ?? '0';
      const after = Number(raw);
      if (!Number.isInteger(after) || after < 0) throw badRequest('Last-Event-ID: expected a non-negative integer event id');
      const abort = new AbortController();
      const events = await followRun(deps, c.get('principal').tenantId, c.req.param('id'), after, { keepAliveMs: deps.keepAliveMs, signal: abort.signal });
      return sseResponse(c, events, publicFrame, abort);
    })
    .get(
      '/:id/events',
      doc({
        summary: 'Read a run’s raw events',
        description: 'Newline-delimited JSON: every stored event with its `seq` and the runtime’s own session id (`runtimeSessionId`), from the start or after `after`, then live ones until the terminal event.',
        query: v.object({ after: v.optional(v.pipe(v.string(), v.regex(/^\d+$/), v.description('Only events with a greater seq'))) }),
        responds: 'application/x-ndjson',
      }),
      async (c) => {
      const tenantId = c.get('principal').tenantId;
      const raw = c.req.query('after') ?? '0';
      const after = Number(raw);
      if (!Number.isInteger(after) || after < 0) throw badRequest('after: expected a non-negative integer event seq');
      const abort = new AbortController();
      const events = await followRun(deps, tenantId, c.req.param('id'), after, { keepAliveMs: deps.keepAliveMs, signal: abort.signal });
      let runtimeSessionId = await inTenant(deps.db, c, (tx) => runtimeSessionIdOf(tx, c.req.param('id')));
      const lines = (async function* () {
        for await (const e of events) {
          if (!e) continue; // a keep-alive tick: NDJSON has no comment lines
          if (e.event.type === 'session_init' && e.event.runtimeSessionId) runtimeSessionId = e.event.runtimeSessionId;
          yield { seq: e.seq, ...e.event, runtimeSessionId };
        }
      })();
      return c.body(ndjsonStream(lines, () => abort.abort()), 200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    });
}

/**
 * An event's SSE frame as streamed, encoded once for all subscribers: the hub hands every subscriber of a run the same
 * StoredEvent object (held here only as long as the run's memory or a stream holds it).
 */
const encoded = new WeakMap<StoredEvent, string>();
function publicFrame(e: StoredEvent): string {
  let frame = encoded.get(e);
  if (frame === undefined) encoded.set(e, (frame = sseFrameText({ id: String(e.seq), data: JSON.stringify(publicEvent(e.event)) })));
  return frame;
}

/** The conductor stream does not carry the runtime session id (seed 000, "Events"). */
function publicEvent<T extends { runtimeSessionId?: string }>(event: T): Omit<T, 'runtimeSessionId'> {
  if (event.runtimeSessionId === undefined) return event;
  const { runtimeSessionId: _omit, ...rest } = event;
  return rest;
}

/** The answers' types fit what the reference documents (compile-time only). */
// the stored subTask is typed as any JSON object; createRun writes every field SubTaskSchema documents
export type DocumentedRunSummary = Documents<typeof RunSummarySchema, Omit<RunSummary, 'subTask'> & { subTask: v.InferOutput<typeof RunSummarySchema.entries.subTask> }>;
