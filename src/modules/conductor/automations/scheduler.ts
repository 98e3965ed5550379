import { withSystem } from '../../../db/index.ts';
import { describeError } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { failUnstarted, hasRunningFiring, insertFiring, lockDue, updateAutomation, type AutomationRow, type Firing } from './automations.repo.ts';
import { cadenceOf } from './automations.service.ts';
import { startFiring, type FiringDeps } from './firing.service.ts';
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
const BATCH = 50;
/** A claimed firing with no run after this long lost its conductor between the claim and the run (see failUnstarted). */
const UNSTARTED_MS = 60_000;
const SWEEP_EVERY_TICKS = 10; // every ~5 s: one indexed query over open firings only

export interface Scheduler {
  start(): void;
  stop(): Promise<void>;
  /** One pass at `now` (tests drive it with a fixed clock); answers how many automations were due. */
  tick(now?: Date): Promise<number>;
}

export function createScheduler(deps: FiringDeps): Scheduler {
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const starting = new Set<Promise<unknown>>();

  async function tick(now = new Date()): Promise<number> {
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
        const row = await updateAutomation(tx, a.id, { ...advance, ...(firing ? { last_fired_at: now } : {}) });
        if (firing) fired.push({ row, firing });
      }
      return rows.length;
    });
    await Promise.all(
      fired.map(({ row, firing }) => {
        const p = startFiring(deps, row, firing).finally(() => starting.delete(p));
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
        if (ticks++ % SWEEP_EVERY_TICKS === 0) await withSystem(deps.db, (tx) => failUnstarted(tx, new Date(Date.now() - UNSTARTED_MS)));
        due = await tick();
      } catch (err) {
        deps.log.warn('automation tick failed', { error: describeError(err) });
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
