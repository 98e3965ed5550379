import type { RunEvent } from '../../../contracts/run-event.ts';
import type { StoredEvent } from './hub.ts';

/**
 * The runs this conductor drives right now. Each keeps its events in memory while it runs, so a subscriber that
 * attaches mid-run replays from here without waiting for the batched log write.
 */
export interface ActiveRun {
  runId: string;
  tenantId: string;
  sessionId: string;
  controller: AbortController;
  /** Why the run is being stopped, once it is: `cancelled` by a client, `interrupted` by a shutdown. */
  stopping: 'cancelled' | 'interrupted' | undefined;
  events: StoredEvent[];
  done: Promise<void>;
  runtimeSessionId: string | undefined;
}

export function createActiveRuns() {
  const runs = new Map<string, ActiveRun>();
  const settling = new Set<Promise<void>>();
  return {
    /** Work a run still does after it left this set (saving its state bundle); a graceful stop waits for it. */
    settle(work: Promise<void>) {
      settling.add(work);
      const done = () => void settling.delete(work);
      work.then(done, done);
    },
    settled: async () => void (await Promise.allSettled([...settling])),
    get: (id: string) => runs.get(id),
    add(run: ActiveRun) {
      runs.set(run.runId, run);
    },
    remove(id: string) {
      runs.delete(id);
    },
    all: () => [...runs.values()],
    ids: () => [...runs.keys()],
  };
}
export type ActiveRuns = ReturnType<typeof createActiveRuns>;

export function isTerminalEvent(e: RunEvent): boolean {
  return e.type === 'result' || e.type === 'error';
}
