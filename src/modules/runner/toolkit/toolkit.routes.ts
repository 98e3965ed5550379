import { Hono } from 'hono';
import { ToolkitInvokeRequest } from '../../../contracts/runner.wire.ts';
import { notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { SessionStore } from '../sessions/sessions.store.ts';
import type { Toolkit } from './toolkit.service.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import { encodeNdjsonLine } from '../../../shared/ndjson.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';

/**
 * `GET /runner/toolkit/specs` (every platform tool), `GET /runner/sessions/{id}/toolkit/specs` (the profile's
 * scope) and `POST /runner/sessions/{id}/toolkit/invoke` (200 {result:{ok, value}}; 403 out of scope; 404 unknown
 * tool or session; with `stream: true` NDJSON: `{output}` lines while it runs, then `{result}`). Sessions are the
 * caller tenant's only.
 */
export function toolkitRoutes(deps: { toolkit: Toolkit; sessions: SessionStore }): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();

  app.get('/runner/toolkit/specs', async (c) => c.json({ specs: await deps.toolkit.specs() }));

  app.get('/runner/sessions/:id/toolkit/specs', async (c) => {
    const session = deps.sessions.require(c.get('tenant'), c.req.param('id'));
    return c.json({ specs: await deps.toolkit.scopedSpecs(session) });
  });

  app.post('/runner/sessions/:id/toolkit/invoke', async (c) => {
    const session = deps.sessions.require(c.get('tenant'), c.req.param('id'));
    if (session.status === 'shutdown') throw notFound(`session shut down: ${session.id}`);
    const body = await readJson(c, ToolkitInvokeRequest);
    const opts = { platform: body.platform === true };
    if (body.stream) return streamed(deps.toolkit, session, body.toolName, body.input, c.req.raw.signal, opts);
    const { result } = await deps.toolkit.invoke(session, body.toolName, body.input, c.req.raw.signal, undefined, opts);
    return c.json({ result });
  });

  return app;
}

/** An invoke whose output (a running command's) is streamed as it comes; refusals (403, 404) still answer as errors. */
async function streamed(toolkit: Toolkit, session: SessionRecord, toolName: string, input: unknown, signal: AbortSignal, opts: { platform: boolean }): Promise<Response> {
  let push: ((line: unknown) => void) | undefined;
  const early: unknown[] = [];
  // the stream carries the command's output; anything else it reports (a tripped limit) joins the session's run, if any
  const emit = (event: RunEvent) => (event.type === 'tool_output' ? (push ?? ((line: unknown) => early.push(line)))({ output: event.message ?? '' }) : session.runOutput?.(event));
  const invoked = toolkit.invoke(session, toolName, input, signal, emit, opts);
  // a refused call throws before the tool starts: answer it as JSON, like the plain invoke
  const settled = await Promise.race([invoked.then(() => 'done' as const), new Promise<'running'>((resolve) => setImmediate(() => resolve('running')))]);
  if (settled === 'done') await invoked;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (line) => controller.enqueue(encodeNdjsonLine(line));
      for (const line of early.splice(0)) push(line);
      invoked.then(
        ({ result }) => {
          push!({ result });
          controller.close();
        },
        (err) => controller.error(err),
      );
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/x-ndjson' } });
}
