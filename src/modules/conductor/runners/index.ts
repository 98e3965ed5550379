/** The runners this conductor drives: the fleet, the profile/pool broadcaster and its reconcile loop. */
export { runnersFeature } from './runners.feature.ts';
export { createFleet, type Fleet, type FleetMember } from './fleet.ts';
export { createBroadcaster, type Broadcaster } from './broadcast.ts';
