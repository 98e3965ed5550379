import type { Feature } from '../feature.ts';
import { deviceDepsOf } from '../device/index.ts';
import { dashboardRoutes } from './dashboard.routes.ts';

/** The sign-in, `/cli-auth` and `/device` pages: public, cookie sessions. */
export const dashboardFeature: Feature = (deps) => ({
  public: dashboardRoutes({ db: deps.db, pepper: deps.secrets.pepper, keyDeps: deps.keys, device: deviceDepsOf(deps), authenticate: deps.authenticate }),
});
