import type { Kysely } from 'kysely';
import { withTenant, type Database, type DB } from '../../../db/index.ts';
import { AsyncQueue } from '../../../shared/async-queue.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { SseFrame } from '../../../shared/sse.ts';
import { PLAN_CHANNEL } from './engine.ts';
import { applyDelta, isTerminalRun, toWire, type PlanDelta, type WireRun } from './plan.ts';
import { loadWorkflowRun, planEvents, runStatus, type StoredPlanEvent } from './workflows.repo.ts';
import type { Tx } from '../../../db/index.ts';

/**
 * The workflow run stream (seed 000 Events): a `snapshot` event, then one `plan_status` event per stored change, ending
 * after the run reaches a terminal status. Events are rows numbered per run (the SSE id), so `Last-Event-ID` resumes
 * after the last one seen (no snapshot then). Any conductor may have written them: a NOTIFY wakes the followers of that
 * run on every replica, and a quiet stream re-reads at each keep-alive, so a lost notification only delays.
 */
export interface PlanFeed {
  start(): Promise<void>;
  stop(): Promise<void>;
  follow(tenantId: string, id: string, after: number | undefined, opts: { keepAliveMs: number; signal: AbortSignal }): Promise<AsyncGenerator<SseFrame | null>>;
}

export function createPlanFeed(deps: { db: Kysely<DB>; database: Database; log: Logger }): PlanFeed {
  const followers = new Map<string, Set<() => void>>();
  let unlisten: (() => Promise<void>) | undefined;

  return {
    async start() {
      unlisten = await deps.database.listen(PLAN_CHANNEL, (payload) => {
        try {
          const { w } = JSON.parse(payload) as { w: string };
          followers.get(w)?.forEach((wake) => wake());
        } catch {
          deps.log.warn('ignoring malformed workflow event notification', { payload: payload.slice(0, 200) });
        }
      });
    },
    async stop() {
      await unlisten?.().catch(() => {});
    },
    async follow(tenantId, id, after, opts) {
      const first = await withTenant(deps.db, tenantId, (tx) => loadWorkflowRun(tx, id));
      if (!first) throw notFound(`unknown workflow run: ${id}`);
      if (after !== undefined && after > first.seq) throw badRequest(`Last-Event-ID: this workflow run has no event ${after} (its last is ${first.seq})`);
      // resuming: the snapshot as of the event named, rebuilt from the base and the deltas up to it
      const base = after === undefined || first.seq === 0 ? toWire(first.state) : await withTenant(deps.db, tenantId, (tx) => snapshotAt(tx, id, after));
      const queue = new AsyncQueue<true>();
      const wake = () => queue.push(true);
      let set = followers.get(id);
      if (!set) followers.set(id, (set = new Set()));
      set.add(wake);
      return (async function* () {
        try {
          let current = base;
          let last = after ?? first.seq;
          if (after === undefined) {
            yield { id: String(first.seq), event: 'snapshot', data: JSON.stringify({ workflowRun: current }) };
            if (isTerminalRun(first.state.status)) return;
          }
          while (!opts.signal.aborted) {
            const { events, run } = await withTenant(deps.db, tenantId, async (tx) => ({ events: await planEvents(tx, id, last + 1, Number.MAX_SAFE_INTEGER), run: await runStatus(tx, id) }));
            for (const e of events) {
              const delta = e.payload as PlanDelta;
              current = applyDelta(current, delta);
              last = e.seq;
              yield { id: String(e.seq), event: 'plan_status', data: JSON.stringify({ change: delta.change, workflowRun: current }) };
              if (isTerminalRun(Number(current.status))) return;
            }
            if (!run || (isTerminalRun(run.status) && last >= run.seq)) return;
            if (events.length > 0) continue;
            const woke = await queue.next(opts.keepAliveMs, opts.signal);
            if (!woke && !opts.signal.aborted) yield null;
          }
        } finally {
          set.delete(wake);
          if (set.size === 0) followers.delete(id);
        }
      })();
    },
  };
}

/** The snapshot after event `seq`: event 0 (the base) with the deltas 1..seq applied. */
async function snapshotAt(tx: Tx, id: string, seq: number): Promise<WireRun> {
  let events: StoredPlanEvent[] = await planEvents(tx, id, 0, seq);
  let current = (events[0]?.payload as { workflowRun: WireRun } | undefined)?.workflowRun;
  if (!current || events[0].seq !== 0) throw new Error(`workflow run ${id}: its base event is missing`);
  for (;;) {
    for (const e of events) if (e.seq > 0) current = applyDelta(current, e.payload as PlanDelta);
    const next = events.at(-1)!.seq;
    if (next >= seq) return current;
    events = await planEvents(tx, id, next + 1, seq);
    if (events.length === 0) return current;
  }
}
