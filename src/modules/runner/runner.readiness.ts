import { allOf, anyOf, merge, probe, type CheckResult, type ReadyReport } from '../../shared/readiness.ts';
import type { WorkerSubstrate } from './substrates/substrate.ts';
import type { WorkerEndpoint } from './workers/worker-endpoint.ts';
import type { WorkerSlots } from './workers/worker-slots.ts';

/**
 * A runner is ready once its start-up checks (the sandbox probe) are done and, when workers are configured, at least
 * one of them answers its /health now (each URL once, however many runtimes share it). A runner with no worker
 * configured has nothing to wait on. A substrate that depends on something outside (the container engine, with its
 * version and image) is checked too: the operator configured it, so its absence is a problem.
 */
export function runnerReadiness(deps: { started: () => boolean; slots: WorkerSlots; substrates?: readonly WorkerSubstrate[]; limits?: () => CheckResult }): () => Promise<ReadyReport> {
  return async () => {
    const endpoints = new Map<string, WorkerEndpoint>();
    for (const slot of deps.slots.all()) if (slot.endpoint) endpoints.set(slot.endpoint.url, slot.endpoint);
    const workers = await Promise.all(
      [...endpoints.values()].map((e) =>
        probe(`worker ${e.url}`, async () => {
          if (!(await e.probe(2000))) throw new Error(e.lastError() ?? 'no answer');
        }),
      ),
    );
    const startup: ReadyReport = deps.started()
      ? { ready: true, checks: [], problems: [] }
      : { ready: false, checks: [{ name: 'runner start-up', ok: false, ms: 0, error: 'start-up checks still running' }], problems: ['runner start-up: start-up checks still running'] };
    const substrates = await Promise.all((deps.substrates ?? []).flatMap((s) => (s.readiness ? [s.readiness()] : [])));
    // the sandbox limits: not ready only when SVC_SANDBOX_LIMITS=require cannot be met (best-effort gaps are a warning)
    const limits = deps.started() && deps.limits ? [deps.limits()] : [];
    return merge([startup, anyOf('workers', workers), allOf([...substrates, ...limits])]);
  };
}
