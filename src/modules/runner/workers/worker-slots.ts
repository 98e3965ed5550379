import type { Config } from '../../../config/config.ts';
import type { FetchLike } from '../../../contracts/http-client.ts';
import type { RuntimeSlotMode, SidecarSlotState } from '../../../contracts/runner.wire.ts';
import { RUNTIMES, type Runtime } from '../../../contracts/worker.ts';
import { createLogger } from '../../../shared/log.ts';
import { createWorkerEndpoint, type WorkerEndpoint } from './worker-endpoint.ts';
import type { WorkerClient } from '../../../contracts/worker.client.ts';

/**
 * The runner's sidecar slots: one per runtime, each pointing at the worker URL configured for it (or none: a stub).
 * Owns the periodic /health probe that keeps slot states fresh between runs. A runtime with no URL configured is served
 * by the worker module of this process when there is one: called directly (`opts.local`, the worker contract's direct
 * transport), or through the `fetch` the runner was given. Configured URLs go through that `fetch` (default: global).
 */
export interface WorkerSlot {
  runtime: Runtime;
  /** undefined for a stub slot (no worker configured for the runtime). */
  endpoint: WorkerEndpoint | undefined;
}

export interface WorkerSlots {
  slot(runtime: Runtime): WorkerSlot;
  all(): WorkerSlot[];
  /** Probes every configured endpoint once, in parallel, each bounded by `timeoutMs`. */
  probeAll(timeoutMs: number): Promise<void>;
  close(): void;
}

export const PROBE_INTERVAL_MS = 5_000;
/**
 * Base URL of a worker reached in-process: with a `fetch` given and no URL configured for a runtime, the runtime is
 * served by the worker module living in this process (`--role=all`), whose app ignores the host.
 */
export const IN_PROCESS_WORKER_URL = 'http://worker.in-process';
const PERIODIC_PROBE_TIMEOUT_MS = 2_000;
const log = createLogger('runner:workers');

export function slotMode(slot: WorkerSlot): RuntimeSlotMode {
  if (!slot.endpoint) return 'stub';
  const reported = slot.endpoint.reportedMode();
  // a worker that says it serves a different runtime is configured wrong: say so instead of guessing
  return reported === undefined || reported === 'all' || reported === slot.runtime ? 'sidecar' : 'unknown';
}

export function slotState(slot: WorkerSlot): SidecarSlotState {
  return slot.endpoint ? slot.endpoint.state() : 'stub';
}

export function createWorkerSlots(
  config: Config['runner'],
  fetchFn: FetchLike | undefined,
  opts: { probeIntervalMs?: number; local?: WorkerClient } = {},
): WorkerSlots {
  const endpoints = new Map<string, WorkerEndpoint>();
  const slots = new Map<Runtime, WorkerSlot>();
  for (const runtime of RUNTIMES) {
    const url = config.workerUrlByRuntime[runtime] ?? config.workerUrl ?? (fetchFn || opts.local ? IN_PROCESS_WORKER_URL : undefined);
    let endpoint: WorkerEndpoint | undefined;
    if (url) {
      endpoint = endpoints.get(url) ?? createWorkerEndpoint(url, url === IN_PROCESS_WORKER_URL && opts.local ? opts.local : fetchFn);
      endpoints.set(url, endpoint);
    }
    slots.set(runtime, { runtime, endpoint });
  }

  const probeAll = async (timeoutMs: number) => {
    await Promise.all([...endpoints.values()].map((e) => e.probe(timeoutMs)));
  };

  const interval = opts.probeIntervalMs ?? PROBE_INTERVAL_MS;
  let timer: NodeJS.Timeout | undefined;
  if (endpoints.size > 0 && interval > 0) {
    timer = setInterval(() => {
      probeAll(PERIODIC_PROBE_TIMEOUT_MS).catch((err) => log.warn('probe failed', { error: String(err) }));
    }, interval);
    // probing must never keep a process (or a test run) alive on its own
    timer.unref();
  }

  return {
    slot: (runtime) => slots.get(runtime)!,
    all: () => [...slots.values()],
    probeAll,
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
