import { Hono } from 'hono';
import { ToolkitInvokeRequest } from '../../../contracts/runner.wire.ts';
import { notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { SessionStore } from '../sessions/sessions.store.ts';
import type { Toolkit } from './toolkit.service.ts';

/**
 * `GET /runner/toolkit/specs` (every platform tool), `GET /runner/sessions/{id}/toolkit/specs` (the profile's
 * scope) and `POST /runner/sessions/{id}/toolkit/invoke` (200 {result:{ok, value}}; 403 out of scope; 404 unknown
 * tool or session). Sessions are the caller tenant's only.
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
    const { result } = await deps.toolkit.invoke(session, body.toolName, body.input, c.req.raw.signal);
    return c.json({ result });
  });

  return app;
}
