import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { defineCommand } from 'citty';
import { loadConfig, ConfigError } from '../config/config.ts';
import { openDatabaseOf } from '../app/database.ts';
import { portlessModeOf, startPortless } from '../app/portless.ts';
import type { Database } from '../db/index.ts';
import { describeError, SetupError } from '../shared/errors.ts';
import { limitHeap } from '../shared/heap.ts';
import { configureLogging, createLogger } from '../shared/log.ts';
import { RUNNING_FROM } from '../shared/package-root.ts';
import type { Config } from '../config/config.ts';
import type { RunningServer } from '../app/server.ts';

const log = createLogger('serve');

/** How long a signalled `svc serve` waits for its graceful stop before it exits anyway. */
const STOP_DEADLINE_MS = 25_000;

export default defineCommand({
  meta: { name: 'serve', description: 'Start the server (roles: all, conductor, runner, worker, or a comma list)' },
  args: {
    role: { type: 'string', description: 'all | conductor | runner | worker | a comma list (env SVC_ROLE)' },
    port: { type: 'string', description: 'port to listen on (env PORT; default 8080, or 7070 for a runner or worker without a conductor)' },
    host: { type: 'string', description: 'address to bind (env SVC_HOST, default 127.0.0.1)' },
  },
  async run({ args }) {
    let config;
    try {
      config = loadConfig(process.env, { role: args.role, port: args.port, host: args.host });
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
        process.exit(2);
      }
      throw err;
    }
    // a server's heap, not a library's (startSvc() leaves its host process alone)
    limitHeap(config.heap);
    const portless = portlessModeOf(config);
    if (portless) {
      // no port (the outbound worker): ends on its own (the runner's shutdown command) or on a signal, after saving its state
      let running;
      try {
        running = await startPortless(portless, config);
      } catch (err) {
        process.stderr.write(`svc: cannot start ${portless.what}: ${describeError(err)}\n`);
        process.exit(2);
      }
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => void running.stop());
      await running.done;
      process.exit(0);
    }
    // PostgreSQL starts first and boots while the server's modules load: a restart no longer waits for it after them.
    configureLogging({ level: config.logLevel });
    let launched!: () => void;
    const spawned = new Promise<void>((resolve) => (launched = resolve));
    const database: Promise<Database> | undefined = openDatabaseOf(config, launched);
    database?.catch(() => {}); // the server reports its failure
    if (database) await Promise.race([spawned, database.then(() => {}, () => {})]);
    const { startServer } = await import('../app/server.ts');
    const { PrivilegedRoleError } = await import('../db/tenant.ts');
    let server;
    try {
      server = await startServer(config, { database });
    } catch (err) {
      const setup = setupProblem(err);
      if (err instanceof PrivilegedRoleError || setup) {
        process.stderr.write(`svc: ${(setup ?? (err as Error)).message}\n`);
        process.exit(2);
      }
      // Another svc (or anything) on the port is a setup problem with one fix, not a crash: say which port, no stack.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') {
        const why = code === 'EADDRINUSE' ? 'is already in use; stop what holds it or pass --port (env PORT)' : 'needs privileges to bind; pass a port above 1023 with --port (env PORT)';
        process.stderr.write(`svc: port ${config.port} on ${config.host} ${why}\n`);
        process.exit(2);
      }
      throw err;
    }
    process.stdout.write(`svc listening on ${server.url} (roles: ${config.roles.join(',')}${RUNNING_FROM === 'bundle' ? '; from the boot bundle' : ''})\n${whereToGo(server, config)}`);
    // A promise nobody awaited that fails (a background query when the database connection drops) must not take the
    // server and every run in flight down with it: log it with its stack, so its source can be found and handled.
    process.on('unhandledRejection', (reason) => {
      log.error('unhandled promise rejection', { error: describeError(reason), stack: reason instanceof Error ? reason.stack : undefined });
    });
    const shutdown = (signal: string) => {
      process.stderr.write(`svc: ${signal} received, shutting down\n`);
      // a graceful stop that cannot finish (a part waiting on a database that went away mid-start) ends the process
      // anyway, before an orchestrator's SIGKILL (Kubernetes waits 30 s); the embedded cluster's watchdog stops it
      setTimeout(() => {
        process.stderr.write(`svc: still stopping after ${STOP_DEADLINE_MS / 1000} s; exiting\n`);
        process.exit(1);
      }, STOP_DEADLINE_MS).unref();
      server.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    // the job queue comes up after the server serves: if it cannot, the server stops and exits 1, never half up; so
    // does a throwaway database that died (its last commits may be gone). The server has begun its stop already.
    void server.failed.then((err) => {
      process.stderr.write(`svc: ${describeError(err)}; shutting down\n`);
      setTimeout(() => {
        process.stderr.write(`svc: still stopping after ${STOP_DEADLINE_MS / 1000} s; exiting\n`);
        process.exit(1);
      }, STOP_DEADLINE_MS).unref();
      server.stop().finally(() => process.exit(1));
    });
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    // a closed terminal (or the bin/svc.js wrapper passing it on) stops the server gracefully too, not at once
    process.once('SIGHUP', () => shutdown('SIGHUP'));
  },
});

/** A setup problem the operator fixes (shared/errors.ts SetupError), itself or as the cause of the boot's failure. */
function setupProblem(err: unknown): SetupError | undefined {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof SetupError) return e;
  return undefined;
}

/**
 * The lines under the listening line: the dashboard and the API reference when this process serves them, and where
 * the owner key of tenant `default` is (the key itself is printed once, at the first boot, and never again).
 */
export function whereToGo(server: Pick<RunningServer, 'url' | 'built'>, config: Pick<Config, 'dataDir' | 'identity'>): string {
  const { links, bootstrapKey } = server.built;
  const lines: string[] = [];
  if (links.dashboard) lines.push(`  dashboard:     ${server.url}${links.dashboard} (sign in with an API key)`);
  if (links.docs) lines.push(`  API reference: ${server.url}${links.docs}`);
  const file = join(config.dataDir, 'bootstrap-key');
  const shown = relative(process.cwd(), file);
  if (config.identity.bootstrapToken) lines.push('  owner key:     the one SVC_BOOTSTRAP_TOKEN holds');
  else if (existsSync(file)) lines.push(`  owner key:     ${shown.startsWith('..') || isAbsolute(shown) ? file : shown}`);
  else if (bootstrapKey) lines.push('  owner key:     printed above (a throwaway database: not written to disk)');
  return lines.map((l) => l + '\n').join('');
}
