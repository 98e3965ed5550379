import type { Config } from '../config/config.ts';
import { configureLogging } from '../shared/log.ts';

/**
 * A worker alone with SVC_RUNNER_URL and SVC_WORKER_TOKEN set runs in outbound client mode: no port, one session,
 * driven by the runner's callback protocol (modules/worker/outbound.ts). The sandbox substrates start it this way.
 */
export function isOutboundWorker(config: Config): boolean {
  return config.roles.length === 1 && config.roles[0] === 'worker' && Boolean(config.worker.runnerUrl && config.worker.workerToken);
}

export async function startOutbound(config: Config) {
  configureLogging({ level: config.logLevel });
  const { startOutboundWorker } = await import('../modules/worker/index.ts');
  return startOutboundWorker({ config: config.worker });
}
