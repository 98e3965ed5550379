import { Hono } from 'hono';
import { CAPABILITY_BUNDLES } from '../../../contracts/toolkit.ts';
import * as v from 'valibot';
import { doc } from '../../../shared/route-doc.ts';
import type { IdentityEnv } from '../identity/index.ts';

const Bundles = v.object({ bundles: v.array(v.object({ value: v.string(), label: v.string(), description: v.string(), tools: v.array(v.string()) })) });

/**
 * `GET /api/capability-bundles`: the selectors a profile's `tools` may hold (`@default`, `@files`, …) with the
 * platform tools each one grants, for UIs and the CLI. The list is static: the runner resolves the same table.
 * Mounted at `/capability-bundles`.
 */
export function capabilityBundleRoutes(): Hono<IdentityEnv> {
  const bundles = CAPABILITY_BUNDLES.map((b) => ({ value: b.value, label: b.label, description: b.description, tools: [...b.tools] }));
  return new Hono<IdentityEnv>().get('/', doc({ summary: 'List capability bundles', description: 'The selectors a profile’s `tools` may hold (`@default`, `@files`, `@exec`, …) with the platform tools each one grants.', response: Bundles }), (c) => c.json({ bundles }));
}
