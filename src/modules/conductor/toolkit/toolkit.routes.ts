import { Hono } from 'hono';
import { CAPABILITY_BUNDLES } from '../../../contracts/toolkit.ts';
import type { IdentityEnv } from '../identity/index.ts';

/**
 * `GET /api/capability-bundles`: the selectors a profile's `tools` may hold (`@default`, `@files`, …) with the
 * platform tools each one grants, for UIs and the CLI. The list is static: the runner resolves the same table.
 * Mounted at `/capability-bundles`.
 */
export function capabilityBundleRoutes(): Hono<IdentityEnv> {
  const bundles = CAPABILITY_BUNDLES.map((b) => ({ value: b.value, label: b.label, description: b.description, tools: [...b.tools] }));
  return new Hono<IdentityEnv>().get('/', (c) => c.json({ bundles }));
}
