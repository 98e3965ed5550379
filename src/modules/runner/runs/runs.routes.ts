import { Hono } from 'hono';
import { RUN_ADOPTABLE_HEADER, RUN_TOKEN_HEADER } from '../../../contracts/runner.ts';
import { RunRequest } from '../../../contracts/runner.wire.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import { ndjsonStream } from '../../../shared/ndjson.ts';
import { extractTrace } from '../../../shared/tracing/index.ts';
import type { RunnerEnv } from '../runner.context.ts';
import { openRun, type OpenRunDeps } from './open-run.ts';

const ndjson = { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' };

/**
 * `POST /runner/run`: a SubTask in, NDJSON RunEvents out. A caller that hangs up cancels the run, unless it started
 * the run as adoptable (RUN_ADOPTABLE_HEADER): then the run goes on and another conductor re-attaches with
 * `GET /runner/runs/{id}/events?after=N`, or cancels it with `POST /runner/runs/{id}/cancel` (taps.ts).
 */
export function runRoutes(deps: OpenRunDeps): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();
  app.post('/runner/run', async (c) => {
    const body = await readJson(c, RunRequest);
    const adoptable = c.req.header(RUN_ADOPTABLE_HEADER) === '1';
    // over a socket the server aborts the request signal on hang-up; in-process callers cancel the body instead
    const run = openRun(deps, c.get('tenant'), body, { runToken: c.req.header(RUN_TOKEN_HEADER) || undefined, adoptable, trace: extractTrace(c.req.raw.headers) }, c.req.raw.signal);
    return new Response(ndjsonStream(run.events, run.hangUp), { status: 200, headers: ndjson });
  });
  app.get('/runner/runs/:runId/events', (c) => {
    const raw = c.req.query('after') ?? '0';
    if (!/^\d{1,15}$/.test(raw)) throw badRequest('after: expected the id of the last event held (a non-negative integer)');
    const runId = c.req.param('runId');
    const tenant = c.get('tenant');
    return new Response(readerStream(c.req.raw.signal, (signal) => deps.taps.read(tenant, runId, Number(raw), signal)), { status: 200, headers: ndjson });
  });
  app.post('/runner/runs/:runId/cancel', (c) => {
    const runId = c.req.param('runId');
    if (!deps.taps.cancel(c.get('tenant'), runId, 'cancelled by its conductor')) return c.json({ error: `unknown run: ${runId}` }, 404);
    return c.body(null, 204);
  });
  return app;
}

/** A reader of an adoptable run: hanging up (request aborted, or the body cancelled in-process) only detaches it. */
function readerStream(request: AbortSignal, open: (signal: AbortSignal) => AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const detach = new AbortController();
  request.addEventListener('abort', () => detach.abort(), { once: true });
  return ndjsonStream(open(detach.signal), () => detach.abort());
}
