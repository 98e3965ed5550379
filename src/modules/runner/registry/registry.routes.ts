import { Hono } from 'hono';
import * as v from 'valibot';
import { PoolSpec, ProfileSpec } from '../../../contracts/runner.wire.ts';
import { INTERNAL_JSON_MAX_DEPTH, readJson } from '../../../shared/http.ts';
import type { RunnerEnv } from '../runner.context.ts';
import type { Registry } from './registry.store.ts';

/**
 * `/runner/profiles` and `/runner/pools`: the conductor's broadcasts of profiles and pools into this runner, per
 * tenant. Both share one shape (list, create-or-replace with 204, idempotent delete), so one helper serves both.
 */
export function registryRoutes(deps: { profiles: Registry<ProfileSpec>; pools: Registry<PoolSpec> }): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();
  mount(app, '/runner/profiles', 'profile', 'profiles', ProfileSpec, deps.profiles, (p) => ({ name: p.name, runtime: p.runtime }));
  mount(app, '/runner/pools', 'pool', 'pools', PoolSpec, deps.pools, (p) => p);
  return app;
}

function mount<S extends v.GenericSchema<unknown, { name: string }>>(
  app: Hono<RunnerEnv>,
  path: string,
  key: string,
  listKey: string,
  schema: S,
  registry: Registry<v.InferOutput<S>>,
  summarize: (record: v.InferOutput<S>) => unknown,
): void {
  const body = v.object({ [key]: schema });
  app.get(path, (c) => c.json({ [listKey]: registry.list(c.get('tenant')).map(summarize) }));
  app.post(path, async (c) => {
    // a profile's free-form `fs` arrives here one level deeper than the conductor accepted it
    const parsed = (await readJson(c, body, { maxDepth: INTERNAL_JSON_MAX_DEPTH })) as Record<string, v.InferOutput<S>>;
    registry.put(c.get('tenant'), parsed[key]);
    return c.body(null, 204);
  });
  app.delete(`${path}/:name`, (c) => {
    registry.delete(c.get('tenant'), c.req.param('name'));
    return c.body(null, 204);
  });
}
