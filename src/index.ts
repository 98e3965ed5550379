import { loadConfig, type Flags } from './config/config.ts';
import { startServer, type RunningServer } from './app/index.ts';
import { describeError } from './shared/errors.ts';
import { createLogger } from './shared/log.ts';

/**
 * svc as a library: start a whole instance in-process (by default on a throwaway embedded PostgreSQL cluster, removed
 * on stop, and an ephemeral port), get its URL and an owner key, stop it. Our own tests use this same API.
 */
export interface SvcInstance {
  url: string;
  /** An owner key of tenant `default` (the bootstrap key). */
  key: string;
  server: RunningServer;
  /**
   * Settles with the error if the instance stops on its own: its throwaway database died (memory mode keeps nothing
   * across a database crash, so it does not carry on with what is left), or its job queue could not start. Runs in
   * flight end with an error naming the cause, then the instance stops; the process that embeds it is left alone
   * (no exit), so a test runner reports the failures and goes on. Never settles after a plain stop().
   */
  failed: Promise<Error>;
  stop(): Promise<void>;
}

const log = createLogger('svc');

export async function startSvc(options: { env?: Record<string, string | undefined>; flags?: Flags } = {}): Promise<SvcInstance> {
  const env = { DATABASE_URL: 'memory', SVC_LOG_LEVEL: 'warn', ...options.env };
  const config = loadConfig(env, { port: 0, ...options.flags });
  const server = await startServer(config);
  const failed = server.failed.then((err) => {
    log.error('the instance is stopping', { url: server.url, error: describeError(err) });
    return err;
  });
  return { url: server.url, key: server.built.bootstrapKey ?? '', server, failed, stop: () => server.stop(2000) };
}

export { loadConfig, type Config, ConfigError } from './config/config.ts';
