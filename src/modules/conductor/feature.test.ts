import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../shared/metrics.ts';
import { loadConfig } from '../../config/config.ts';
import { migrate, openDatabase, type Database } from '../../db/index.ts';
import { createConductor, FEATURES, type Conductor, type Feature, type IdentityEnv } from './index.ts';

/**
 * The feature contract as a new family's author uses it: one factory added to the list gets authenticated `/api`
 * routes, public routes, and a start/drain/stop lifecycle in list order (drain and stop in reverse).
 */
const lifecycle: string[] = [];
const probe =
  (name: string): Feature =>
  ({ guards }) => ({
    api:
      name === 'first'
        ? new Hono<IdentityEnv>()
            .get('/probe', (c) => c.json({ tenant: c.get('principal').tenantId }))
            .put('/probe', guards.requireRole('admin', 'changing the probe'), (c) => c.json({ changed: true }))
        : undefined,
    public: name === 'first' ? new Hono().get('/probe-public', (c) => c.text('hello')) : undefined,
    start: async () => void lifecycle.push(`start ${name}`),
    drain: async () => void lifecycle.push(`drain ${name}`),
    stop: async () => void lifecycle.push(`stop ${name}`),
  });

let dir: string;
let database: Database;
let conductor: Conductor;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-feature-'));
  const config = loadConfig({ DATABASE_URL: 'memory', SVC_DATA_DIR: dir, SVC_BOOTSTRAP_TOKEN: 'ao_test_featurecontract0000001', SVC_LOG_LEVEL: 'silent' });
  database = await openDatabase({ url: 'memory', dataDir: dir });
  await migrate(database);
  conductor = await createConductor({ config, database, internalToken: 'internal-token-0123456789', selfUrl: 'http://127.0.0.1:1', metrics: createMetrics(), features: [...FEATURES, probe('first'), probe('second')] });
}, 60_000);
afterAll(async () => {
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

const owner = { Authorization: 'Bearer ao_test_featurecontract0000001' };

describe('a feature added to the list', () => {
  it('serves its api routes under /api behind authentication, as the caller', async () => {
    expect((await conductor.app.request('/api/probe')).status).toBe(401);
    const res = await conductor.app.request('/api/probe', { headers: owner });
    expect(await res.json()).toEqual({ tenant: 'default' });
    expect(await (await conductor.app.request('/api/probe', { method: 'PUT', headers: owner })).json()).toEqual({ changed: true });
  });

  it('serves its public routes without a credential', async () => {
    const res = await conductor.app.request('/probe-public');
    expect(await res.text()).toBe('hello');
  });

  it('started in list order, and drains then stops in reverse', async () => {
    expect(lifecycle).toEqual(['start first', 'start second']);
    await conductor.close();
    expect(lifecycle).toEqual(['start first', 'start second', 'drain second', 'drain first', 'stop second', 'stop first']);
  });
});
