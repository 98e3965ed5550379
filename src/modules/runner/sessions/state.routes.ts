import { Hono } from 'hono';
import { HydrateRequest } from '../../../contracts/runner.wire.ts';
import { RUNTIME_SESSION_HEADER } from '../../../contracts/worker.ts';
import { readJson } from '../../../shared/http.ts';
import type { RunnerEnv } from '../runner.context.ts';
import { exportState, hydrate, type StateDeps } from './state.service.ts';

/** `GET /runner/sessions/{id}/state` (raw bundle out) and `POST /runner/sessions/{id}/hydrate` (bundle in). */
export function stateRoutes(deps: StateDeps): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();

  app.get('/runner/sessions/:id/state', async (c) => {
    const rec = deps.sessions.require(c.get('tenant'), c.req.param('id'));
    const bundle = await exportState(deps, rec);
    const headers: Record<string, string> = { 'content-type': bundle.contentType, 'content-length': String(bundle.bytes.byteLength) };
    if (bundle.runtimeSessionId) headers[RUNTIME_SESSION_HEADER] = bundle.runtimeSessionId;
    return new Response(bundle.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers });
  });

  app.post('/runner/sessions/:id/hydrate', async (c) => {
    const body = await readJson(c, HydrateRequest);
    await hydrate(deps, c.get('tenant'), c.req.param('id'), body);
    return c.body(null, 204);
  });

  return app;
}
