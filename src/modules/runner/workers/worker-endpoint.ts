import { createWorkerClient, type WorkerClient } from '../../../contracts/worker.client.ts';
import type { FetchLike } from '../../../contracts/http-client.ts';
import type { ObservedInstance, SidecarSlotState } from '../../../contracts/runner.wire.ts';
import type { WorkerHealth, WorkerMode } from '../../../contracts/worker.ts';
import { describeError } from '../../../shared/errors.ts';

/**
 * One configured sidecar URL as the runner sees it: its client, whether it answers (from /health probes and from run
 * traffic), and the worker instances observed behind it. Several runtimes may share one URL (a MODE=all worker); they
 * then share this record, because they share the process.
 */
export interface WorkerEndpoint {
  readonly url: string;
  readonly client: WorkerClient;
  /** Slot state: cold until it first answers, live while it answers, degraded/unreachable while it does not. */
  state(): SidecarSlotState;
  /** The runtime mode the worker reported on its last good probe (undefined before one). */
  reportedMode(): WorkerMode | undefined;
  lastError(): string | undefined;
  instances(): ObservedInstance[];
  /** Probes /health once (concurrent callers share the probe); resolves true when it answered. Never throws. */
  probe(timeoutMs: number): Promise<boolean>;
  /** A run response arrived: the worker is alive and `instanceId` served one more run. */
  recordRun(instanceId: string, inflight: number | undefined): void;
  /** A run could not reach the worker or its stream broke. */
  recordFailure(err: unknown): void;
}

/** Failures in a row after which a once-live endpoint is reported unreachable instead of degraded. */
export const UNREACHABLE_AFTER = 3;
/** Instances kept per endpoint; a restarting fleet would otherwise grow this list forever. */
const MAX_INSTANCES = 16;

/**
 * `transport`: the worker's client itself (the direct transport, a worker module in this process), or the `fetch` its
 * HTTP client calls (default: the global fetch).
 */
export function createWorkerEndpoint(url: string, transport: FetchLike | WorkerClient | undefined, now: () => Date = () => new Date()): WorkerEndpoint {
  const client = typeof transport === 'object' ? transport : createWorkerClient({ baseUrl: url, fetch: transport });
  const seen = new Map<string, ObservedInstance>();
  let everAnswered = false;
  let failures = 0;
  let error: string | undefined;
  let mode: WorkerMode | undefined;
  let lastInstance: string | undefined;
  let inFlightProbe: Promise<boolean> | undefined;

  function instance(id: string): ObservedInstance {
    const at = now().toISOString();
    let rec = seen.get(id);
    if (!rec) {
      rec = {
        instanceId: id, firstSeenAt: at, lastSeenAt: at, runsServed: 0, consecutiveFailures: 0, lastProbedAt: '',
        inflight: 0, uptimeSeconds: 0, pid: 0, nodeVersion: '',
        memory: { rssBytes: 0, heapUsedBytes: 0, heapTotalBytes: 0, externalBytes: 0 }, cpu: { userMicros: 0, systemMicros: 0 },
      };
      seen.set(id, rec);
      if (seen.size > MAX_INSTANCES) {
        const oldest = [...seen.values()].sort((a, b) => a.lastSeenAt.localeCompare(b.lastSeenAt))[0];
        seen.delete(oldest.instanceId);
      }
    }
    rec.lastSeenAt = at;
    rec.consecutiveFailures = 0;
    lastInstance = id;
    return rec;
  }

  function succeeded(): void {
    everAnswered = true;
    failures = 0;
    error = undefined;
  }

  function failed(err: unknown): void {
    failures++;
    error = describeError(err);
    // a failure names no instance; charge it to the one we last heard from
    const rec = lastInstance ? seen.get(lastInstance) : undefined;
    if (rec) rec.consecutiveFailures++;
  }

  function observeHealth(h: WorkerHealth): void {
    succeeded();
    mode = h.runtime;
    if (!h.instanceId) return;
    const rec = instance(h.instanceId);
    rec.lastProbedAt = rec.lastSeenAt;
    if (typeof h.inflight === 'number') rec.inflight = h.inflight;
    if (typeof h.uptimeSeconds === 'number') rec.uptimeSeconds = h.uptimeSeconds;
    if (typeof h.pid === 'number') rec.pid = h.pid;
    if (typeof h.nodeVersion === 'string') rec.nodeVersion = h.nodeVersion;
    if (h.memory) rec.memory = { ...rec.memory, ...h.memory };
    if (h.cpu) rec.cpu = { ...rec.cpu, ...h.cpu };
  }

  return {
    url,
    client,
    state() {
      if (failures === 0) return everAnswered ? 'live' : 'cold';
      return everAnswered && failures < UNREACHABLE_AFTER ? 'degraded' : 'unreachable';
    },
    reportedMode: () => mode,
    lastError: () => error,
    instances: () => [...seen.values()].map((rec) => structuredClone(rec)),
    probe(timeoutMs) {
      inFlightProbe ??= client
        .health(AbortSignal.timeout(timeoutMs))
        .then((h) => (observeHealth(h), true))
        .catch((err) => (failed(err), false))
        .finally(() => (inFlightProbe = undefined));
      return inFlightProbe;
    },
    recordRun(instanceId, inflight) {
      succeeded();
      if (!instanceId) return;
      const rec = instance(instanceId);
      rec.runsServed++;
      if (inflight !== undefined) rec.inflight = inflight;
    },
    recordFailure: failed,
  };
}
