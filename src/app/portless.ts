import type { Config } from '../config/config.ts';
import { configureLogging } from '../shared/log.ts';
import { ROLES, type PortlessMode, type PortlessProcess } from './roles.ts';

/**
 * The portless mode of a process's only role, when its config asks for it (the roles table says which role has one
 * and when it applies: a worker alone with SVC_RUNNER_URL and SVC_WORKER_TOKEN runs in outbound client mode).
 */
export function portlessModeOf(config: Config): PortlessMode | undefined {
  const mode = config.roles.length === 1 ? ROLES[config.roles[0]].portless : undefined;
  return mode?.applies(config) ? mode : undefined;
}

export async function startPortless(mode: PortlessMode, config: Config): Promise<PortlessProcess> {
  configureLogging({ level: config.logLevel });
  return mode.start(config);
}
