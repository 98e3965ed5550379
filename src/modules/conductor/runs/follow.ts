import { withTenant } from '../../../db/index.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import { AsyncQueue } from '../../../shared/async-queue.ts';
import { notFound } from '../../../shared/errors.ts';
import { isTerminalEvent } from './active-runs.ts';
import type { StoredEvent } from './hub.ts';
import { eventsAfter, getRun, LIVE_STATUSES } from './runs.repo.ts';
import type { RunDeps } from './runs.service.ts';
import type { Hub } from './hub.ts';

/**
 * A run's events after `afterSeq`: first what already happened (from memory for a run driven here, else from the
 * log), then live events from the hub, ending after the terminal event. `null` items are keep-alive ticks. Works the
 * same whichever conductor replica drives the run.
 */
export async function followRun(
  deps: RunDeps & { hub: Hub },
  tenantId: string,
  runId: string,
  afterSeq: number,
  opts: { keepAliveMs: number; signal: AbortSignal },
): Promise<AsyncGenerator<StoredEvent | null>> {
  // a run this process drives exists (the active runs are keyed by tenant too): no read needed to know it
  if (!deps.active.get(tenantId, runId) && !(await withTenant(deps.db, tenantId, (tx) => getRun(tx, runId)))) throw notFound(`unknown run: ${runId}`);
  const queue = new AsyncQueue<StoredEvent>();
  // Subscribe and snapshot in one synchronous step, so nothing published in between is lost.
  const sub = deps.hub.subscribe(tenantId, runId, afterSeq, (e) => queue.push(e));
  const local = deps.active.get(tenantId, runId);
  // memory holds what this conductor drove itself: a run it adopted reads the earlier events from the log
  const snapshot = local && afterSeq >= local.memoryFrom ? local.events.filter((e) => e.seq > afterSeq) : undefined;
  return (async function* () {
    let last = afterSeq;
    try {
      const replay = snapshot ?? (await withTenant(deps.db, tenantId, (tx) => eventsAfter(tx, runId, afterSeq)));
      for (const e of replay) {
        if (e.seq <= last) continue;
        last = e.seq;
        sub.advance(e.seq);
        yield e;
        if (isTerminalEvent(e.event)) return;
      }
      while (!opts.signal.aborted) {
        const e = await queue.next(opts.keepAliveMs, opts.signal);
        if (e) {
          if (e.seq <= last) continue;
          last = e.seq;
          yield e;
          if (isTerminalEvent(e.event)) return;
          continue;
        }
        if (opts.signal.aborted) return;
        // Quiet for a while: keep the connection alive, and make sure the run has not ended without us hearing.
        const fresh = await withTenant(deps.db, tenantId, (tx) => getRun(tx, runId));
        if (fresh && !LIVE_STATUSES.has(fresh.status) && !deps.active.get(tenantId, runId)) {
          const rest = await withTenant(deps.db, tenantId, (tx) => eventsAfter(tx, runId, last));
          for (const r of rest) {
            last = r.seq;
            yield r;
            if (isTerminalEvent(r.event)) return;
          }
          yield { seq: last + 1, event: runEvent('error', { message: `run ended with status ${fresh.status}` }) };
          return;
        }
        yield null;
      }
    } finally {
      sub.unsubscribe();
    }
  })();
}
