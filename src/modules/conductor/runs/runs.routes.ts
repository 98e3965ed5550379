import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { sseFrameText, sseResponse } from '../../../shared/sse.ts';
import { ndjsonStream } from '../../../shared/ndjson.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { inTenant, pageOf, sendList } from '../../crud/index.ts';
import { cancelRun, terminateRun } from './cancel.ts';
import { followRun } from './follow.ts';
import type { Hub, StoredEvent } from './hub.ts';
import { eventsAfter, RUN_STATUSES, runtimeSessionIdOf, type ShownRunStatus } from './runs.repo.ts';
import { createRun, getRunSummary, listRunSummaries, RunBody, type RunDeps } from './runs.service.ts';

/**
 * `/api/runs`: create (202), list, get with the event log, cancel, force-terminate, the SSE stream, and the raw event
 * stream (`/events`, NDJSON: every stored event with its `seq` and the run's `runtimeSessionId`).
 */
export function runRoutes(deps: RunDeps & { hub: Hub; keepAliveMs: number }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ body: RunBody }), async (c) => c.json(await createRun(deps, c.get('principal').tenantId, await readJson(c, RunBody)), 202))
    .get('/', async (c) => {
      const page = pageOf(c);
      const status = c.req.query('status');
      if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) throw badRequest(`status: expected one of ${RUN_STATUSES.join(', ')}`);
      return sendList(c, page, await listRunSummaries(deps, c.get('principal').tenantId, status ? { status: status as ShownRunStatus } : {}, page));
    })
    .get('/:id', async (c) => {
      const tenantId = c.get('principal').tenantId;
      const summary = await getRunSummary(deps, tenantId, c.req.param('id'));
      const events = await inTenant(deps.db, c, (tx) => eventsAfter(tx, summary.id, 0));
      return c.json({ ...summary, events: events.map((e) => publicEvent(e.event)) });
    })
    .delete('/:id', async (c) => {
      await cancelRun(deps, c.get('principal').tenantId, c.req.param('id'));
      return c.body(null, 204);
    })
    .post('/:id/terminate', async (c) => c.json(await terminateRun(deps, c.get('principal').tenantId, c.req.param('id'))))
    .get('/:id/stream', async (c) => {
      const raw = c.req.header('Last-Event-ID') ?? c.req.query('lastEventId') ?? '0';
      const after = Number(raw);
      if (!Number.isInteger(after) || after < 0) throw badRequest('Last-Event-ID: expected a non-negative integer event id');
      const abort = new AbortController();
      const events = await followRun(deps, c.get('principal').tenantId, c.req.param('id'), after, { keepAliveMs: deps.keepAliveMs, signal: abort.signal });
      return sseResponse(c, events, publicFrame, abort);
    })
    .get('/:id/events', async (c) => {
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
