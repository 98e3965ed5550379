import type { Feature } from '../feature.ts';
import { ANNOUNCE_CHANNEL, announceRoutes } from './announce.routes.ts';

/**
 * The fleet's upkeep: restarted runners get the tenants' profiles and pools back (probe, then reconcile on a timer),
 * and at once when a runner announces itself (to this replica, or to another one, which tells the rest).
 */
export const runnersFeature: Feature = ({ fleet, broadcaster, database, internalToken, log }) => {
  let unlisten: (() => Promise<void>) | undefined;
  const upkeep = log.child('runners');
  return {
    public: announceRoutes({ fleet, broadcaster, database, internalToken, log: upkeep }),
    async start() {
      [, unlisten] = await Promise.all([
        fleet.probe().then((restarted) => broadcaster.restore(restarted)),
        database.listen(ANNOUNCE_CHANNEL, (url) => {
          if (fleet.byUrl(url)) void broadcaster.reconcileNow().catch((err) => upkeep.warn('reconciling an announced runner failed', { url, error: String(err) }));
        }),
      ]);
      broadcaster.start();
    },
    async drain() {
      broadcaster.stop();
      await unlisten?.().catch(() => {});
    },
  };
};
