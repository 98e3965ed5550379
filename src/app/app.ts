import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { requestId } from 'hono/request-id';
import type { Config } from '../config/config.ts';
import { migrate, openDatabase, assertUnprivilegedRole, type Database } from '../db/index.ts';
import { createLogger } from '../shared/log.ts';
import { resolveSecret } from '../shared/secret-files.ts';
import { drainUnreadBody, useJsonErrors } from '../shared/http.ts';
import { createMetrics, type Metrics } from '../shared/metrics.ts';
import { httpMetrics } from './http-metrics.ts';
import { readyz } from './readyz.ts';
import type { ReadyReport } from '../shared/readiness.ts';
import { needsDatabase } from './roles.ts';
import type { RunHooks } from '../modules/conductor/index.ts';

/**
 * The composition root: builds one Hono application from the roles in the config. Between roles in one process the
 * clients' `fetch` is the other module's own `app.fetch` (in-process, streamed, no sockets); across processes it is
 * the network. Modules are imported lazily so a worker-only process never loads the conductor.
 */
export interface BuiltApp {
  app: Hono;
  metrics: Metrics;
  database: Database | undefined;
  /** The owner key confirmed or minted at boot (conductor role only). */
  bootstrapKey: string | undefined;
  /** The conductor's run hooks (conductor role only), for code embedding svc: subscribe to runFinished, add gates. */
  runHooks: RunHooks | undefined;
  /** First step of a graceful stop: end what streams (runs in flight) so open responses finish on their own. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface BuildOptions {
  /** The URL this process is reachable at (after listening); the runner's hash and MCP URLs derive from it. */
  selfUrl: string;
  version: string;
}

const accessLog = createLogger('http');

export async function buildApp(config: Config, opts: BuildOptions): Promise<BuiltApp> {
  const metrics = createMetrics();
  const closers: Array<() => Promise<void>> = [];
  const drainers: Array<() => Promise<void>> = [];
  const readiness: Array<() => Promise<ReadyReport>> = [];
  let stopping = false;
  const app = new Hono();
  useJsonErrors(app);
  app.use('*', requestId({ headerName: 'X-Request-Id' }));
  // Clients (the CLI's `doctor`) compare versions without a request of their own.
  app.use('*', async (c, next) => {
    await next();
    try {
      c.res.headers.set('X-Svc-Version', opts.version);
    } catch {
      // a proxied response's headers are immutable; it goes out without the version
    }
  });
  app.use('*', httpMetrics(metrics));
  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    accessLog.debug('request', { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started), requestId: c.get('requestId') });
  });
  // Outside the body limits: a body a limit refused is left alone (its 413 closes the connection), any other is drained.
  app.use('*', drainUnreadBody({ maxBytes: 16 * 1024 * 1024, maxMs: 5000 }));
  // The unread rest of an oversized body makes the connection unusable: tell the client not to reuse it.
  const tooLarge = (max: number, v1: boolean) => (c: Context) =>
    v1
      ? c.json({ error: { message: `request body exceeds ${max} bytes`, type: 'invalid_request_error', param: null, code: 'request_too_large' } }, 413, { Connection: 'close' })
      : c.json({ error: `request body exceeds ${max} bytes` }, 413, { Connection: 'close' });
  app.use('/api/*', bodyLimit({ maxSize: config.bodyLimitBytes, onError: tooLarge(config.bodyLimitBytes, false) }));
  // File and skill uploads are multipart bodies of their own size class; every other /v1 body is JSON.
  const uploadLimit = bodyLimit({ maxSize: config.uploadLimitBytes, onError: tooLarge(config.uploadLimitBytes, true) });
  const jsonLimit = bodyLimit({ maxSize: config.bodyLimitBytes, onError: tooLarge(config.bodyLimitBytes, true) });
  app.use('/v1/*', (c, next) => (/^\/v1\/(files|skills)(\/|$)/.test(c.req.path) ? uploadLimit(c, next) : jsonLimit(c, next)));

  const workerOnly = config.roles.length === 1 && config.roles[0] === 'worker';
  if (!workerOnly) app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', readyz(readiness, () => stopping));
  app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'Content-Type': metrics.contentType }));

  let database: Database | undefined;
  let bootstrapKey: string | undefined;
  let runHooks: RunHooks | undefined;
  // The database opens while the modules below load: an embedded cluster boots in parallel with their import.
  const opening = needsDatabase(config.roles) ? openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, embedded: config.embeddedPostgres }) : undefined;
  opening?.catch(() => {}); // awaited below, or closed when something else fails first
  try {
    let workerFetch: typeof fetch | undefined;
    if (config.roles.includes('worker')) {
      const { createWorker } = await import('../modules/worker/index.ts');
      const worker = createWorker({ config: config.worker });
      closers.push(() => worker.close());
      drainers.push(() => worker.close());
      // Alone, the worker answers on the public port; beside a runner it is reached in-process only.
      if (workerOnly || !config.roles.includes('runner')) app.route('/', worker.app);
      else workerFetch = inProcessFetch(worker.app);
    }
    let runnerFetch: typeof fetch | undefined;
    const internalToken = resolveInternalToken(config);
    if (config.roles.includes('runner')) {
      const { createRunner } = await import('../modules/runner/index.ts');
      const runner = createRunner({
        config: config.runner,
        internalToken: internalToken!,
        publicUrl: config.runner.publicUrl ?? opts.selfUrl,
        version: opts.version,
        metrics,
        workerFetch,
        // Beside a conductor, the toolkit's delegate and notify call it in-process (the app is complete by then).
        conductor: config.roles.includes('conductor') && !config.runner.conductorUrl ? { baseUrl: opts.selfUrl, fetch: (req) => app.fetch(req) } : undefined,
      });
      closers.push(() => runner.close());
      drainers.push(() => runner.close());
      await runner.ready;
      readiness.push(() => runner.readiness());
      // Beside a conductor the runner is reached in-process only: its routes are not served on the public port, except
      // the session MCP endpoint (session token), which worker processes reach over HTTP. Alone, it answers there with
      // the internal token.
      if (config.roles.includes('conductor')) app.route('/', runner.mcpApp);
      else app.route('/', runner.app);
      runnerFetch = inProcessFetch(runner.app);
    }
    if (opening) {
      database = await opening;
      const db = database;
      closers.push(() => db.close());
      await assertUnprivilegedRole(database.db);
      await migrate(database);
      const { createConductor, createLimiter } = await import('../modules/conductor/index.ts');
      const conductor = await createConductor({ config, database, runnerFetch, internalToken: internalToken!, selfUrl: opts.selfUrl, metrics });
      closers.push(() => conductor.close());
      drainers.unshift(() => conductor.drain());
      bootstrapKey = conductor.bootstrapKey;
      runHooks = conductor.hooks;
      readiness.push(() => conductor.readiness());
      app.route('/', conductor.app);
      const { createAgentsApi } = await import('../modules/agents-api/index.ts');
      const agents = createAgentsApi({
        conductor: conductor.services,
        limiter: createLimiter({ db: database.db, log: createLogger('limits') }),
        limits: { perKey: config.agents.rateLimitPerKey, perOrg: config.agents.rateLimitPerOrg, windowMs: 60_000 },
        settings: { ...config.agents, selfUrl: config.runner.conductorUrl ?? opts.selfUrl, version: opts.version },
      });
      closers.push(() => agents.close());
      drainers.push(() => agents.drain());
      app.route('/v1', agents.v1);
      app.route('/api', agents.api);
    }
  } catch (err) {
    if (opening && !database) await opening.then((d) => d.close()).catch(() => {});
    for (const close of closers.reverse()) await close().catch(() => {});
    throw err;
  }

  return {
    app,
    metrics,
    database,
    bootstrapKey,
    runHooks,
    async drain() {
      stopping = true;
      for (const drain of drainers) await drain().catch(() => {});
    },
    async close() {
      for (const close of [...closers].reverse()) await close();
    },
  };
}

/**
 * The token of conductor → runner calls: SVC_INTERNAL_TOKEN, else (dev) generated and kept in the secrets folder, so
 * split roles on one machine sharing SVC_DATA_DIR agree on it. Conductor and runner in one process with no other
 * runners keep it in memory when nothing else persists (DATABASE_URL=memory). A worker alone needs none.
 */
function resolveInternalToken(config: Config): string | undefined {
  const { roles } = config;
  if (!roles.includes('runner') && !roles.includes('conductor')) return undefined;
  const split = roles.includes('runner') !== roles.includes('conductor') || config.conductor.runners.length > 0;
  return resolveSecret({ configured: config.internalToken, dir: config.secretsDir, file: 'internal-token', persist: split || config.databaseUrl !== 'memory' });
}

/** A `fetch` that calls a Hono app in-process: same Request/Response objects, streamed bodies, no sockets. */
export function inProcessFetch(app: { fetch: (req: Request) => Response | Promise<Response> }): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init))) as typeof fetch;
}
