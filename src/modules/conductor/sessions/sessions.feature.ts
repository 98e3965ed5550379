import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { sessionRoutes } from './sessions.routes.ts';

/** `/api/sessions…`, `/api/profiles/{name}/runs`, the VFS and worker lease views and `/api/topology`. */
export const sessionsFeature: Feature = ({ runs }) => ({
  api: new Hono<IdentityEnv>().route('/', sessionRoutes({ ...runs.deps, fanOutTimeoutMs: 2000 })),
});
