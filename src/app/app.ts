import { buildOpenApi, hasOperations } from './openapi/openapi.ts';
import { docsPage } from './openapi/docs-page.ts';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { requestId } from 'hono/request-id';
import type { Config, RoleName } from '../config/config.ts';
import { migrate, assertUnprivilegedRole, type Database } from '../db/index.ts';
import { openDatabaseOf } from './database.ts';
import { createLogger } from '../shared/log.ts';
import { resolveSecret } from '../shared/secret-files.ts';
import { drainUnreadBody, strictJsonBodies, useJsonErrors } from '../shared/http.ts';
import { createMetrics, type Metrics } from '../shared/metrics.ts';
import type { ReadyReport } from '../shared/readiness.ts';
import { httpMetrics } from './http-metrics.ts';
import { readyz } from './readyz.ts';
import type { RunHooks } from '../modules/conductor/index.ts';
import { BUILD_ORDER, ROLES, roleTraits, type RoleContext } from './roles.ts';

/**
 * The composition root: builds one Hono application from the roles in the config. Between roles in one process the
 * contracts' clients are the other module's direct transport (`direct`: typed function calls and async iterables of
 * RunEvents, no Request, Response or JSON); what a module has no direct transport for goes through its `app.fetch`
 * (in-process, streamed, no sockets). Across processes it is HTTP over the network. It loops over the roles table
 * (roles.ts), which says how each module is built and mounted.
 */
export interface BuiltApp {
  app: Hono;
  metrics: Metrics;
  database: Database | undefined;
  /** The owner key confirmed or minted at boot (conductor role only). */
  bootstrapKey: string | undefined;
  /** What `GET /` links: the dashboard, the API reference and the health endpoints this process has mounted, by name. */
  links: Readonly<Record<string, string>>;
  /** The conductor's run hooks (conductor role only), for code embedding svc: subscribe to runFinished, add gates. */
  runHooks: RunHooks | undefined;
  /** Called by the server once it serves this app (modules that announce themselves, or start more, do it now). */
  serving(): void;
  /**
   * Settles (with the error) only if something failed for good once built: a module's work begun by `serving()`, or a
   * throwaway database that died. The server stops then.
   */
  failure: Promise<Error>;
  /** First step of a graceful stop: end what streams (runs in flight) so open responses finish on their own. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface BuildOptions {
  /** The URL this process is reachable at (after listening); the runner's hash and MCP URLs derive from it. */
  selfUrl: string;
  version: string;
  /** The database already being opened (openDatabaseOf, begun by `svc serve`); buildApp opens it otherwise. */
  database?: Promise<Database>;
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
  // File and skill uploads are multipart bodies of their own size class; every other /api and /v1 body is JSON.
  const apiLimit = bodyLimit({ maxSize: config.bodyLimitBytes, onError: tooLarge(config.bodyLimitBytes, false) });
  const apiUploadLimit = bodyLimit({ maxSize: config.uploadLimitBytes, onError: tooLarge(config.uploadLimitBytes, false) });
  app.use('/api/*', (c, next) => (c.req.path === '/api/skills/import' ? apiUploadLimit(c, next) : apiLimit(c, next)));
  app.use('/api/*', strictJsonBodies());
  const uploadLimit = bodyLimit({ maxSize: config.uploadLimitBytes, onError: tooLarge(config.uploadLimitBytes, true) });
  const jsonLimit = bodyLimit({ maxSize: config.bodyLimitBytes, onError: tooLarge(config.bodyLimitBytes, true) });
  app.use('/v1/*', (c, next) => (/^\/v1\/(files|skills)(\/|$)/.test(c.req.path) ? uploadLimit(c, next) : jsonLimit(c, next)));

  const traits = roleTraits(config.roles);
  if (traits.healthz) app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', readyz(readiness, () => stopping));
  app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'Content-Type': metrics.contentType }));

  let database: Database | undefined;
  let bootstrapKey: string | undefined;
  let runHooks: RunHooks | undefined;
  let links: Record<string, string> = {};
  const stopWork: Array<() => Promise<void>> = [];
  const serving: Array<() => void> = [];
  const failures: Array<Promise<Error>> = [];
  // The database opens while the modules below load: an embedded cluster boots in parallel with their import.
  const opening = opts.database ?? openDatabaseOf(config);
  opening?.catch(() => {}); // awaited below, or closed when something else fails first
  try {
    const internalToken = resolveInternalToken(config);
    const fetches = new Map<RoleName, typeof fetch>();
    const directs = new Map<RoleName, (baseUrl: string) => unknown>();
    const checks: Array<Promise<void>> = [];
    const present = new Set(config.roles);
    const has = (role: RoleName) => present.has(role);
    for (const name of BUILD_ORDER.filter(has)) {
      const spec = ROLES[name];
      if (spec.needsDatabase && !database) {
        database = await opening!;
        const db = database;
        closers.push(() => db.close());
        if (db.embedded) checks.push(db.embedded.durable); // a new cluster is flushed to disk before anything is served
        failures.push(lostReason(db.lost)); // a throwaway database that died: the server stops (server.ts)
        await assertUnprivilegedRole(database.db);
        await migrate(database);
      }
      const built = await spec.build({ config, selfUrl: opts.selfUrl, version: opts.version, metrics, root: app, internalToken, database, has, fetchOf: (r) => fetches.get(r), directOf: ((r: RoleName) => directs.get(r)) as RoleContext['directOf'] });
      closers.push(() => built.close());
      if (built.stopWork) stopWork.push(built.stopWork);
      if (built.serving) serving.push(built.serving);
      if (built.failure) failures.push(built.failure);
      if (built.drain) drainers.push(built.drain);
      if (built.readiness) readiness.push(built.readiness);
      if (built.ready) {
        built.ready.catch(() => {}); // awaited below
        checks.push(built.ready);
      }
      bootstrapKey ??= built.bootstrapKey;
      runHooks ??= built.runHooks;
      // Reached in-process beside the role it serves: only its public-beside routes (if any) go on the public port.
      if (spec.inProcessBeside && has(spec.inProcessBeside)) {
        if (built.publicBeside) app.route('/', built.publicBeside);
      } else app.route('/', built.app);
      for (const m of built.mounts ?? []) app.route(m.prefix, m.app);
      fetches.set(name, inProcessFetch(built.app));
      if (built.direct) directs.set(name, built.direct);
    }
    if (hasOperations(app)) {
      // the reference of what this process serves, generated once from the assembled routes on first read
      let spec: ReturnType<typeof buildOpenApi> | undefined;
      const reference = () => (spec ??= buildOpenApi(app, opts.version));
      app.get('/openapi.json', (c) => c.json(reference()));
      app.get('/docs', (c) => c.html(docsPage(reference() as Parameters<typeof docsPage>[0])));
    }
    links = entryLinks(app);
    app.get('/', rootIndex(links, opts.version));
    await Promise.all(checks);
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
    links,
    runHooks,
    serving: () => serving.forEach((fn) => fn()),
    failure: Promise.race([...failures, new Promise<Error>(() => {})]),
    async drain() {
      stopping = true;
      for (const drain of [...stopWork, ...drainers]) await drain().catch(() => {});
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
  const traits = roleTraits(config.roles);
  if (!traits.internalCalls) return undefined;
  const split = traits.internalCallsCross(config.conductor.runners.length > 0);
  return resolveSecret({ configured: config.internalToken, dir: config.secretsDir, file: 'internal-token', persist: split || config.databaseUrl !== 'memory' });
}

/** Settles with the abort's reason (an Error naming the cause) once the signal aborts; never before. */
function lostReason(signal: AbortSignal): Promise<Error> {
  const reason = () => (signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
  if (signal.aborted) return Promise.resolve(reason());
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(reason()), { once: true }));
}

/** Where a newcomer goes next, by name: the dashboard, the API reference, the health endpoints, of what `app` has mounted. */
function entryLinks(app: Hono): Record<string, string> {
  const links: Record<string, string> = {};
  const has = (path: string) => app.routes.some((r) => (r.method === 'GET' || r.method === 'ALL') && r.path === path);
  for (const [name, path] of [['dashboard', '/dashboard'], ['docs', '/docs'], ['openapi', '/openapi.json'], ['healthz', '/healthz'], ['readyz', '/readyz'], ['metrics', '/metrics']] as const) {
    if (has(path)) links[name] = path;
  }
  return links;
}

/**
 * `GET /`: where curl or a browser lands first. Registered after every role, so a module that serves `/` itself wins;
 * it links only what this instance has mounted (the dashboard with a conductor, the reference at /docs and
 * /openapi.json once a feature serves them).
 */
function rootIndex(links: Record<string, string>, version: string) {
  return (c: Context) => c.json({ name: 'svc', version, links });
}

/** A `fetch` that calls a Hono app in-process: same Request/Response objects, streamed bodies, no sockets. */
export function inProcessFetch(app: { fetch: (req: Request) => Response | Promise<Response> }): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init))) as typeof fetch;
}
