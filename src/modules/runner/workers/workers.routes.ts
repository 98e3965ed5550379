import { availableParallelism } from 'node:os';
import { Hono } from 'hono';
import type { RunnerRuntime, RunnerTopology } from '../../../contracts/runner.wire.ts';
import type { Runtime } from '../../../contracts/worker.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { SessionStore } from '../sessions/sessions.store.ts';
import { slotMode, slotState, type WorkerSlots } from './worker-slots.ts';

/** `/runner/runtimes` and `/runner/topology`: which sidecar serves each runtime, and how it and this process are doing. */
export interface WorkersDeps {
  slots: WorkerSlots;
  sessions: SessionStore;
}

const RUNTIME_NAMES: Record<Runtime, string> = { general: 'General (AI SDK)', runtime_a: 'Runtime A', runtime_b: 'Runtime B' };
/** Reading the topology re-probes the sidecars, but a dead one must not make the read slow. */
const TOPOLOGY_PROBE_TIMEOUT_MS = 1_000;

export function workerRoutes(deps: WorkersDeps): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();

  // live sessions across all tenants: this is the runner's load, not any tenant's data
  const activeByRuntime = (): Record<Runtime, number> => {
    const counts: Record<Runtime, number> = { general: 0, runtime_a: 0, runtime_b: 0 };
    for (const s of deps.sessions.all()) if (s.status !== 'shutdown') counts[s.runtime]++;
    return counts;
  };

  app.get('/runner/runtimes', (c) => {
    const active = activeByRuntime();
    const runtimes: RunnerRuntime[] = deps.slots.all().map((slot) => ({
      id: slot.runtime,
      name: RUNTIME_NAMES[slot.runtime],
      mode: slotMode(slot),
      url: slot.endpoint?.url ?? '',
      activeSessions: active[slot.runtime],
    }));
    return c.json({ runtimes });
  });

  app.get('/runner/topology', async (c) => {
    await deps.slots.probeAll(TOPOLOGY_PROBE_TIMEOUT_MS);
    const active = activeByRuntime();
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const topology: RunnerTopology = {
      process: {
        allocBytes: mem.heapUsed,
        sysBytes: mem.rss,
        heapInuseBytes: mem.heapTotal,
        numGoroutine: process.getActiveResourcesInfo().length,
        numCPU: availableParallelism(),
        uptimeSeconds: Math.floor(process.uptime()),
        cpu: { userMicros: cpu.user, systemMicros: cpu.system },
      },
      sessionsByRuntime: active,
      sidecars: deps.slots.all().map((slot) => ({
        runtime: slot.runtime,
        mode: slotMode(slot),
        endpoint: slot.endpoint?.url ?? '',
        state: slotState(slot),
        activeSessions: active[slot.runtime],
        observedInstances: slot.endpoint?.instances() ?? [],
      })),
    };
    return c.json(topology);
  });

  return app;
}
