import { Hono } from 'hono';
import { CreateSessionRequest } from '../../../contracts/runner.wire.ts';
import { SESSION_STATUS_CODES } from '../../../contracts/runner.ts';
import { INTERNAL_JSON_MAX_DEPTH, readJson } from '../../../shared/http.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { RunnerEnv } from '../runner.context.ts';
import { createSession, sessionHealth, type SessionsDeps } from './sessions.service.ts';
import { toWire } from './sessions.store.ts';

/** `/runner/sessions[/{id}[/health]]`: create, list, read, probe and shut down the tenant's sessions. */
export function sessionRoutes(deps: SessionsDeps): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();

  app.get('/runner/sessions', (c) => {
    // the list is the runner wire form: status as the integer enum
    const sessions = deps.sessions.list(c.get('tenant')).map((s) => ({ ...toWire(s), status: SESSION_STATUS_CODES[s.status] }));
    return c.json({ sessions });
  });

  app.post('/runner/sessions', async (c) => {
    // a profile's free-form `fs` arrives here one level deeper than the conductor accepted it
    const body = await readJson(c, CreateSessionRequest, { maxDepth: INTERNAL_JSON_MAX_DEPTH });
    if (body.profile) {
      if (body.profile.name !== body.profileName) throw badRequest('profile.name: expected the profileName');
      deps.profiles.put(c.get('tenant'), body.profile);
    }
    const rec = createSession(deps, c.get('tenant'), body.profileName, body.sandboxOf);
    return c.json({ sessionId: rec.id }, 201);
  });

  app.get('/runner/sessions/:id', (c) => c.json({ session: toWire(deps.sessions.require(c.get('tenant'), c.req.param('id'))) }));

  app.get('/runner/sessions/:id/health', async (c) => {
    const rec = deps.sessions.require(c.get('tenant'), c.req.param('id'));
    return c.json(await sessionHealth(deps, rec));
  });

  app.delete('/runner/sessions/:id', (c) => {
    deps.sessions.shutdown(deps.sessions.require(c.get('tenant'), c.req.param('id')));
    return c.body(null, 204);
  });

  return app;
}
