import { loadConfig, type Flags } from './config/config.ts';
import { startServer, type RunningServer } from './app/index.ts';

/**
 * svc as a library: start a whole instance in-process (by default on a throwaway embedded PostgreSQL cluster, removed
 * on stop, and an ephemeral port), get its URL and an owner key, stop it. Our own tests use this same API.
 */
export interface SvcInstance {
  url: string;
  /** An owner key of tenant `default` (the bootstrap key). */
  key: string;
  server: RunningServer;
  stop(): Promise<void>;
}

export async function startSvc(options: { env?: Record<string, string | undefined>; flags?: Flags } = {}): Promise<SvcInstance> {
  const env = { DATABASE_URL: 'memory', SVC_LOG_LEVEL: 'warn', ...options.env };
  const config = loadConfig(env, { port: 0, ...options.flags });
  const server = await startServer(config);
  return { url: server.url, key: server.built.bootstrapKey ?? '', server, stop: () => server.stop(2000) };
}

export { loadConfig, type Config, ConfigError } from './config/config.ts';
