import { getRequestListener } from '@hono/node-server';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/config.ts';
import { configureLogging, createLogger } from '../shared/log.ts';
import { startTracing, type Tracing } from '../shared/tracing/index.ts';
import type { Database } from '../db/index.ts';
import { buildApp, type BuiltApp } from './app.ts';
import { VERSION } from './version.ts';

/**
 * Starts an HTTP server for a config. It listens first (so an ephemeral port is known and `/healthz` answers 503
 * while modules start), then builds the app for the URL it is reachable at.
 */
export interface RunningServer {
  url: string;
  port: number;
  built: BuiltApp;
  /** Graceful stop: stop accepting, let in-flight requests finish (up to `graceMs`), then close modules and the database. */
  stop(graceMs?: number): Promise<void>;
  /**
   * Settles (with the error) when something failed for good once the server was up: what the modules start once
   * serving (the job queue), or a throwaway database (`DATABASE_URL=memory`) whose PostgreSQL died. The server has
   * begun its graceful stop then (runs in flight end with an error naming the cause); the caller reports the error
   * (`svc serve` prints it and exits with status 1 once stopped, startSvc() logs it).
   */
  failed: Promise<Error>;
}

const log = createLogger('server');
const STARTING = 'starting';

export async function startServer(config: Config, opts: { database?: Promise<Database> } = {}): Promise<RunningServer> {
  configureLogging({ level: config.logLevel });
  let tracing: Tracing | undefined;
  let fetchApp: ((req: Request) => Response | Promise<Response>) | undefined;
  const listener: RequestListener = getRequestListener((req) => fetchApp!(req), { hostname: config.host });
  // Until the app is built every request is answered here, without it: a probe polling /healthz through the boot costs
  // the boot next to nothing.
  const server: Server = createServer((req, res) => {
    if (fetchApp) return listener(req, res);
    req.resume();
    res.writeHead(503, { 'Content-Type': 'text/plain; charset=UTF-8', 'Content-Length': STARTING.length }).end(STARTING);
  });
  try {
    // the SDK is imported only when OTEL_* asks for traces (config.otel); otherwise the API stays a no-op
    tracing = config.otel ? await startTracing(config.otel, { role: config.roles.join(','), version: VERSION }) : undefined;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
      server.listen(config.port, config.host);
    });
  } catch (err) {
    // the port was taken: a database opened for this server is closed with it (buildApp owns it from here on)
    await tracing?.shutdown();
    await opts.database?.then((d) => d.close()).catch(() => {});
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const selfHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${selfHost}:${port}`;
  let built: BuiltApp;
  try {
    built = await buildApp(config, { selfUrl: url, version: VERSION, database: opts.database });
  } catch (err) {
    await new Promise((r) => server.close(r));
    await tracing?.shutdown();
    throw err;
  }
  fetchApp = built.app.fetch;
  // The modules' background work (loading and starting the job queue: tens of milliseconds of this thread) begins
  // after one turn of the event loop's I/O, so the requests that waited for the app (a health probe) are answered first.
  let stopping: Promise<void> | undefined;
  setImmediate(() =>
    setImmediate(() => {
      if (!stopping) built.serving();
    }),
  );
  log.info('listening', { url, roles: config.roles.join(','), database: config.databaseUrl === undefined ? 'embedded' : config.databaseUrl === 'memory' ? 'embedded (throwaway)' : 'server' });

  const running: RunningServer = {
    url,
    port,
    built,
    failed: built.failure.then((err) => {
      void running.stop().catch(() => {});
      return err;
    }),
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        const http = server;
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeIdleConnections?.();
        const timer = setTimeout(() => http.closeAllConnections?.(), graceMs);
        await built.drain();
        http.closeIdleConnections?.();
        await closed;
        clearTimeout(timer);
        await built.close();
        await tracing?.shutdown().catch((err: unknown) => log.warn('flushing traces failed', { error: String(err) }));
        log.info('stopped', { url });
      })();
      return stopping;
    },
  };
  return running;
}
