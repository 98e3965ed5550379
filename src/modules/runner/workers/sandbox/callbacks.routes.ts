import { Hono, type Context } from 'hono';
import { RUN_ID_HEADER, WORKER_PROTOCOL, WORKER_PROTOCOL_HEADER } from '../../../../contracts/sandbox-worker.ts';
import { RUNTIME_SESSION_HEADER } from '../../../../contracts/worker.ts';
import { AppError, badRequest, notFound } from '../../../../shared/errors.ts';
import type { RunnerEnv } from '../../runner.context.ts';
import { UploadError, type SandboxWorkers } from './sandbox-workers.ts';
import type { WorkerTokens } from './worker-token.ts';

/**
 * The sandbox worker callback API (seed 000): `GET …/next-run` (long-poll for a protocol v1 command; 204 after the
 * poll timeout), `POST …/events` (the active run's NDJSON events; stale or cancelled → 409, a line over 4 MiB or an
 * upload over 256 MiB → 413, open over 4 h → 408) and `POST …/state` (the latest bundle). Every call needs the
 * session's worker token (`Authorization: Bearer`), whose tenant and session claims must match the path session.
 */
export function callbackRoutes(deps: { workers: SandboxWorkers; tokens: WorkerTokens; stateCapBytes: number }): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();

  /** The path session, once its worker token checks out; 404 for a session with no sandbox worker. */
  async function authed(c: Context<RunnerEnv>): Promise<string> {
    const sessionId = c.req.param('id')!;
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    await deps.tokens.verify('svc-worker', token, { sessionId, tenant: deps.workers.tenantOf(sessionId) });
    if (!deps.workers.tenantOf(sessionId)) throw notFound('no sandbox worker');
    return sessionId;
  }

  app.get('/worker/sessions/:id/next-run', async (c) => {
    const sessionId = await authed(c);
    const protocol = c.req.header(WORKER_PROTOCOL_HEADER);
    if (protocol !== String(WORKER_PROTOCOL)) throw badRequest(`${WORKER_PROTOCOL_HEADER}: unsupported worker protocol "${protocol ?? ''}" (this runner speaks ${WORKER_PROTOCOL})`);
    const cmd = await deps.workers.nextCommand(sessionId, c.req.raw.signal);
    return cmd ? c.json(cmd) : c.body(null, 204);
  });

  app.post('/worker/sessions/:id/events', async (c) => {
    const sessionId = await authed(c);
    try {
      await deps.workers.receiveEvents(sessionId, c.req.header(RUN_ID_HEADER) ?? '', c.req.raw.body);
    } catch (err) {
      if (err instanceof UploadError) throw new AppError(err.status, err.message);
      throw err;
    }
    return c.body(null, 204);
  });

  app.post('/worker/sessions/:id/state', async (c) => {
    const sessionId = await authed(c);
    const declared = Number(c.req.header('content-length') ?? NaN);
    if (declared > deps.stateCapBytes) throw new AppError(413, `state bundle is over the size cap (${deps.stateCapBytes} bytes)`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (c.req.raw.body) {
      const reader = c.req.raw.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > deps.stateCapBytes) {
          await reader.cancel().catch(() => {});
          throw new AppError(413, `state bundle is over the size cap (${deps.stateCapBytes} bytes)`);
        }
        chunks.push(value);
      }
    }
    if (size === 0) throw badRequest('state: empty bundle');
    deps.workers.storeState(sessionId, {
      bytes: Buffer.concat(chunks),
      contentType: c.req.header('content-type') ?? 'application/octet-stream',
      runtimeSessionId: c.req.header(RUNTIME_SESSION_HEADER) ?? '',
    });
    return c.body(null, 204);
  });

  return app;
}
