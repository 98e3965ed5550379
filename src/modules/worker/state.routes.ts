import { Hono, type Context } from 'hono';
import { RUNTIME_SESSION_HEADER } from '../../contracts/worker.ts';
import { badRequest, notFound } from '../../shared/errors.ts';
import { runtimeFor, type WorkerContext } from './worker.context.ts';

/**
 * `GET/POST /state/{sessionId}`: move a session's opaque state bundle out of and into a runtime. The `runtime` query
 * is required when MODE is all; the session id is decoded strictly so a malformed escape is a 400, not a guess.
 */
function sessionIdOf(c: Context): string {
  const path = new URL(c.req.url).pathname;
  const raw = path.slice(path.lastIndexOf('/') + 1);
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw badRequest('sessionId: malformed percent-encoding');
  }
  if (!id) throw badRequest('sessionId: required');
  return id;
}

export function stateRoutes(ctx: WorkerContext): Hono {
  const app = new Hono();
  app.get('/state/:sessionId', async (c) => {
    const sessionId = sessionIdOf(c);
    const runtime = runtimeFor(ctx, c.req.query('runtime'), 'runtime');
    const bundle = await runtime.exportState(sessionId);
    if (!bundle) throw notFound(`no exportable state for session ${sessionId}`);
    return c.body(typeof bundle.body === 'string' ? bundle.body : new Uint8Array(bundle.body), 200, {
      'content-type': bundle.contentType,
      [RUNTIME_SESSION_HEADER]: bundle.runtimeSessionId,
    });
  });
  app.post('/state/:sessionId', async (c) => {
    const sessionId = sessionIdOf(c);
    const runtime = runtimeFor(ctx, c.req.query('runtime'), 'runtime');
    const body = new Uint8Array(await c.req.arrayBuffer());
    await runtime.importState(sessionId, body);
    c.header(RUNTIME_SESSION_HEADER, sessionId);
    return c.body(null, 204);
  });
  return app;
}
