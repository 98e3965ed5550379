import { withSystem } from '../../../db/index.ts';
import { describeError } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { failUnstarted, hasRunningFiring, insertFiring, lockDue, updateAutomation, type AutomationRow, type Firing } from './automations.repo.ts';
import { cadenceOf } from './automations.service.ts';
import { reportFired, startFiring, type FiringDeps } from './firing.service.ts';
import { nextSlot } from './schedule.ts';

/**
 * The scheduler every conductor runs. Each tick claims due automations with `FOR UPDATE SKIP LOCKED` (so replicas
 * share the work without waiting on each other), and a slot becomes a firing row in the same transaction that moves
 * `next_run_at` on; the firings' unique (automation, slot) key makes a slot fire once even if two claims ever met, and
 * across restarts. Its run starts after that commit. A slot older than GRACE_MS (everything was down, or this
 * replica stalled) is skipped, not replayed.
 *
 * Why a tick loop and not a pg-boss cron: pg-boss schedules have minute resolution and one schedule per queue key;
 * automations need seconds (6-field crons) and thousands of independent slots. The database is the one clock both
 * share, and the unique key is the exactly-once guarantee.
 */
export const GRACE_MS = 10_000;
const TICK_MS = 500;
/** Slots claimed per tick and source. */
export const BATCH = 50;
/** A claimed firing with no run after this long lost its conductor between the claim and the run (see failUnstarted). */
const UNSTARTED_MS = 60_000;
const SWEEP_EVERY_TICKS = 10; // every ~5 s: one indexed query over open firings only

export interface Scheduler {
  start(): void;
  stop(): Promise<void>;
  /** One pass at `now` (tests drive it with a fixed clock); answers how many slots were due. */
  tick(now?: Date): Promise<number>;
}

/**
 * One pass of a slot source: claims what is due at `now` (in its own transaction, committed before it returns) and
 * answers how many were due and the work to do after the commit (starting the claimed slots' runs).
 */
export type SlotTick = (now: Date) => Promise<{ due: number; started: Array<Promise<unknown>> }>;

/**
 * The scheduler loop, shared by every family with cron slots (automations here, workflow schedules): ticks every
 * TICK_MS (at once again while a batch comes back full), runs `sweep` every SWEEP_EVERY_TICKS ticks, and on stop
 * waits for the starts in flight. Each family brings its own claim (FOR UPDATE SKIP LOCKED plus a unique slot key).
 */
export function createSlotLoop(opts: { tick: SlotTick; sweep?: () => Promise<unknown>; log: FiringDeps['log']; what: string }): Scheduler {
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const starting = new Set<Promise<unknown>>();

  async function tick(now = new Date()): Promise<number> {
    const { due, started } = await opts.tick(now);
    await Promise.all(
      started.map((s) => {
        const p = s.finally(() => starting.delete(p));
        starting.add(p);
        return p;
      }),
    );
    return due;
  }

  async function loop(): Promise<void> {
    let ticks = 0;
    while (!stopped) {
      let due = 0;
      try {
        if (opts.sweep && ticks++ % SWEEP_EVERY_TICKS === 0) await opts.sweep();
        due = await tick();
      } catch (err) {
        opts.log.warn(`${opts.what} tick failed`, { error: describeError(err) });
      }
      if (stopped) return;
      if (due < BATCH) await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, TICK_MS);
        });
    }
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      running = loop();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await running;
      await Promise.allSettled([...starting]);
    },
    tick,
  };
}

/** The automations' slot source on the shared loop. */
export function createScheduler(deps: FiringDeps): Scheduler {
  const tick: SlotTick = async (now) => {
    const fired: Array<{ row: AutomationRow; firing: Firing }> = [];
    const due = await withSystem(deps.db, async (tx) => {
      const rows = await lockDue(tx, now, BATCH);
      for (const a of rows) {
        const cadence = cadenceOf(a);
        let slot: Date | null = new Date(a.nextRunAt!);
        if (now.getTime() - slot.getTime() > GRACE_MS) slot = nextSlot(cadence, new Date(now.getTime() - GRACE_MS - 1));
        if (!slot) {
          await updateAutomation(tx, a.id, { status: 'stopped', next_run_at: null });
          continue;
        }
        if (slot > now) {
          await updateAutomation(tx, a.id, { next_run_at: slot });
          continue;
        }
        const next = nextSlot(cadence, slot);
        const advance = { next_run_at: next, ...(next ? {} : { status: 'stopped' as const }) };
        if (await hasRunningFiring(tx, a.id)) {
          // queue: the slot stays due and fires when the previous firing ends (while still within the grace)
          if (a.overlap === 'queue') continue;
          await insertFiring(tx, { id: prefixedId('fir'), tenantId: a.tenantId, automationId: a.id, scheduledFor: slot, manual: false, outcome: 'skipped', runId: null, sessionId: null, error: 'the previous firing was still running' });
          await updateAutomation(tx, a.id, advance);
          continue;
        }
        const firing = await insertFiring(tx, { id: prefixedId('fir'), tenantId: a.tenantId, automationId: a.id, scheduledFor: slot, manual: false, outcome: null, runId: prefixedId('run'), sessionId: null });
        if (firing && deps.jobs) await reportFired(deps.jobs, tx, a, firing, false);
        const row = await updateAutomation(tx, a.id, { ...advance, ...(firing ? { last_fired_at: now } : {}) });
        if (firing) fired.push({ row, firing });
      }
      return rows.length;
    });
    return { due, started: fired.map(({ row, firing }) => startFiring(deps, row, firing)) };
  };
  const sweep = () => withSystem(deps.db, (tx) => failUnstarted(tx, new Date(Date.now() - UNSTARTED_MS)));
  return createSlotLoop({ tick, sweep, log: deps.log, what: 'automation' });
}
