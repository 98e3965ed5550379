import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { requestOrigin, type DeviceDeps } from '../device/index.ts';
import type { KeyDeps, Principal } from '../identity/index.ts';
import { sessionForApi } from './api-session.ts';
import { appRoutes } from './app.routes.ts';
import { cliAuthRoutes } from './cli-auth.routes.ts';
import { devicePageRoutes } from './device-page.routes.ts';
import { createSessions } from './session.ts';
import { signInRoutes } from './sign-in.routes.ts';

export interface DashboardDeps {
  db: Kysely<DB>;
  pepper: string;
  keyDeps: KeyDeps;
  device: DeviceDeps;
  authenticate(header: string): Promise<Principal>;
}

/**
 * The dashboard the conductor serves itself: sign-in with a tenant API key (→ signed session cookie), the dashboard's
 * pages under `/dashboard` (they call `/api` with that session: api-session.ts), and the `/cli-auth` and `/device`
 * approval pages the CLI's browser and device logins finish on.
 * Mounted at `/` on the conductor's top-level app (not under /api: no bearer auth, cookie sessions).
 */
export function dashboardRoutes(deps: DashboardDeps): Hono {
  const sessions = createSessions({ db: deps.db, pepper: deps.pepper });
  const app = new Hono();
  const limit = bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text('form too large', 413) });
  for (const path of ['/dashboard/*', '/dashboard', '/cli-auth', '/device']) {
    app.use(path, limit);
    // Forms are posted only from our own pages (no cross-site sign-in or approval); browsers send Origin on POST.
    app.use(path, async (c, next) => {
      const origin = c.req.header('origin');
      if (c.req.method === 'POST' && origin && origin !== requestOrigin(c.req)) return c.text('cross-site form post refused', 403);
      await next();
    });
  }
  app.use('/api/*', sessionForApi(sessions));
  app.route('/dashboard', signInRoutes({ sessions, authenticate: deps.authenticate }));
  app.route('/dashboard', appRoutes({ sessions }));
  app.route('/cli-auth', cliAuthRoutes({ sessions, keyDeps: deps.keyDeps }));
  app.route('/device', devicePageRoutes({ sessions, device: deps.device }));
  return app;
}
