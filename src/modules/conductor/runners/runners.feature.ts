import type { Feature } from '../feature.ts';

/** The fleet's upkeep: restarted runners get the tenants' profiles and pools back (probe, then reconcile on a timer). */
export const runnersFeature: Feature = ({ fleet, broadcaster }) => ({
  async start() {
    await broadcaster.restore(await fleet.probe());
    broadcaster.start();
  },
  async drain() {
    broadcaster.stop();
  },
});
