import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withSystem } from '../../../db/index.ts';
import type { RunnerClient, ProfileSpec, PoolSpec } from '../../../contracts/runner.client.ts';
import type { Logger } from '../../../shared/log.ts';
import { allSpecs } from '../profiles/profiles.repo.ts';
import type { Fleet, FleetMember } from './fleet.ts';

/**
 * Keeps every runner's profile and pool registries equal to the database: each change is broadcast at once, and the
 * reconcile loop pushes everything back to a runner that restarted (or was unreachable when a change happened).
 */
export interface Broadcaster {
  send(op: (client: RunnerClient) => Promise<void>): Promise<void>;
  /** Pushes every tenant's profiles and pools to these runners. */
  restore(members: FleetMember[]): Promise<void>;
  /** Probes and restores now (a runner announced itself), after any reconcile already under way. */
  reconcileNow(): Promise<void>;
  start(): void;
  stop(): void;
}

export function createBroadcaster(deps: { db: Kysely<DB>; fleet: Fleet; log: Logger; intervalMs: number }): Broadcaster {
  const { fleet, log } = deps;
  let timer: NodeJS.Timeout | undefined;
  let reconciling: Promise<void> | undefined;
  const stale = new Set<string>();
  /**
   * The runner instance (id and startedAt) each URL last got its registries as. A restart is judged against this,
   * not against what `fleet.probe()` returns: any caller may probe (GET /api/topology does), and the probe that sees
   * a restart first would otherwise swallow it, leaving the restarted runner without profiles and pools.
   */
  const restoredAs = new Map<string, string>();
  const instanceOf = (m: FleetMember) => (m.info ? `${m.info.id}@${m.info.startedAt}` : undefined);

  async function restore(members: FleetMember[]): Promise<void> {
    if (members.length === 0) return;
    const [profiles, pools] = await withSystem(deps.db, async (tx) => [await allSpecs(tx, 'profiles'), await allSpecs(tx, 'pools')]);
    await Promise.all(
      members.map(async (m) => {
        const instance = instanceOf(m);
        try {
          for (const p of profiles) await m.client.putProfile(p.tenantId, p.spec as ProfileSpec);
          for (const p of pools) await m.client.putPool(p.tenantId, p.spec as PoolSpec);
          stale.delete(m.url);
          if (instance) restoredAs.set(m.url, instance);
          log.info('runner registries restored', { url: m.url, profiles: profiles.length, pools: pools.length });
        } catch (err) {
          stale.add(m.url);
          log.warn('restoring runner registries failed', { url: m.url, error: String(err) });
        }
      }),
    );
  }

  async function reconcile(): Promise<void> {
    await fleet.probe();
    await restore(fleet.members().filter((m) => m.healthy && (stale.has(m.url) || restoredAs.get(m.url) !== instanceOf(m))));
  }

  return {
    async send(op) {
      await Promise.all(
        fleet.members().map(async (m) => {
          if (!m.healthy) {
            stale.add(m.url);
            return;
          }
          try {
            await op(m.client);
          } catch (err) {
            stale.add(m.url); // the reconcile loop retries
            log.warn('broadcast to runner failed', { url: m.url, error: String(err) });
          }
        }),
      );
    },
    restore,
    async reconcileNow() {
      await reconciling;
      await reconcile();
    },
    start() {
      const tick = () => {
        reconciling ??= reconcile()
          .catch((err) => log.warn('reconcile failed', { error: String(err) }))
          .finally(() => (reconciling = undefined));
      };
      timer = setInterval(tick, deps.intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
