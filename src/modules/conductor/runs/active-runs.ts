import type { RunEvent } from '../../../contracts/run-event.ts';
import type { StoredEvent } from './hub.ts';

/**
 * The runs this conductor drives right now. Each keeps its events in memory while it runs, so a subscriber that
 * attaches mid-run replays from here without waiting for the batched log write. Run ids are unique per tenant only
 * (a client may choose them), so every lookup names the tenant: another tenant's run under the same id is not found.
 */
export interface ActiveRun {
  runId: string;
  tenantId: string;
  sessionId: string;
  controller: AbortController;
  /** Why the run is being stopped, once it is: `cancelled` by a client, `interrupted` by a shutdown. */
  stopping: 'cancelled' | 'interrupted' | undefined;
  /** Events since `memoryFrom` (a run adopted from a dead conductor keeps only what it drove itself; the log has the rest). */
  events: StoredEvent[];
  memoryFrom: number;
  done: Promise<void>;
  runtimeSessionId: string | undefined;
}

/** A run this conductor starts driving; its events in memory begin after `memoryFrom`. */
export function newActiveRun(tenantId: string, runId: string, sessionId: string, memoryFrom = 0): ActiveRun {
  return { runId, tenantId, sessionId, controller: new AbortController(), stopping: undefined, events: [], memoryFrom, done: Promise.resolve(), runtimeSessionId: undefined };
}

/** The registry key of a run; the NUL cannot occur in a tenant id. */
export const runKey = (tenantId: string, runId: string) => `${tenantId}\u0000${runId}`;

export function createActiveRuns() {
  const runs = new Map<string, ActiveRun>();
  const settling = new Set<Promise<unknown>>();
  return {
    /** Work a run still does after it left this set (saving its state bundle); a graceful stop waits for it. */
    settle(work: Promise<unknown>) {
      settling.add(work);
      const done = () => void settling.delete(work);
      work.then(done, done);
    },
    settled: async () => void (await Promise.allSettled([...settling])),
    get: (tenantId: string, runId: string) => runs.get(runKey(tenantId, runId)),
    add(run: ActiveRun) {
      runs.set(runKey(run.tenantId, run.runId), run);
    },
    remove(tenantId: string, runId: string) {
      runs.delete(runKey(tenantId, runId));
    },
    all: () => [...runs.values()],
  };
}
export type ActiveRuns = ReturnType<typeof createActiveRuns>;

export function isTerminalEvent(e: RunEvent): boolean {
  return e.type === 'result' || e.type === 'error';
}
