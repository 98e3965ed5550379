import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/pg.ts';
import { startSvcProcess, type SvcProcess } from '../support/process.ts';

/**
 * The /v1 limits hold across conductor replicas: two `svc serve --role=conductor` processes on one PostgreSQL
 * database admit 10 requests of one key in total (SVC_RATE_LIMIT_PER_KEY=10 a minute), not 10 each; then every
 * replica answers 429 with Retry-After in the OpenAI error shape. The extension routes (`/api/whoami`, `/api/keys`,
 * `/api/models`, …) take the same per-key and per-organisation counters.
 */
const KEY = 'ao_test_ratelimitratelimitrate01';

describe('a per-key limit across two conductor processes', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let conductors: SvcProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = (name: string) => {
      const dir = mkdtempSync(join(tmpdir(), `svc-limits-${name}-`));
      dirs.push(dir);
      return {
        DATABASE_URL: db.url,
        SVC_DATA_DIR: dir,
        SVC_INSTANCE_ID: name,
        SVC_BOOTSTRAP_TOKEN: KEY,
        AGENT_API_KEY_PEPPER: 'limits-pepper-0123456789abcdef',
        SVC_RATE_LIMIT_PER_KEY: '10',
      };
    };
    // replicas boot at the same moment, as in a deployment
    conductors = await Promise.all(['a', 'b'].map((name) => startSvcProcess(['--role=conductor'], env(name))));
  });
  afterAll(async () => {
    await Promise.all(conductors.map((c) => c.stop('SIGKILL')));
    await db?.drop().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('admits 10 requests in total across both, then answers 429 with Retry-After on each', async () => {
    const [a, b] = conductors;
    const list = (c: SvcProcess) => fetch(c.url + '/v1/agents', { headers: { authorization: `Bearer ${KEY}` } });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await list(i < 6 ? a : b); // 6 through one replica, 4 through the other
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual(Array(10).fill(200));

    for (const replica of [a, b]) {
      const refused = await list(replica);
      expect(refused.status).toBe(429);
      const wait = Number(refused.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      expect(await refused.json()).toEqual({
        error: { message: `Rate limit reached. Retry after ${wait} seconds.`, type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' },
      });
    }
  });
});

describe('per-key and per-organisation limits on /v1 and the extension routes across two conductor processes', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let conductors: SvcProcess[] = [];
  const dirs: string[] = [];
  const OWNER = 'ao_test_orglimitorglimitorglimi01';

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = (name: string) => {
      const dir = mkdtempSync(join(tmpdir(), `svc-org-limits-${name}-`));
      dirs.push(dir);
      return {
        DATABASE_URL: db.url,
        SVC_DATA_DIR: dir,
        SVC_INSTANCE_ID: name,
        SVC_BOOTSTRAP_TOKEN: OWNER,
        AGENT_API_KEY_PEPPER: 'limits-pepper-0123456789abcdef',
        SVC_RATE_LIMIT_PER_KEY: '4',
        SVC_RATE_LIMIT_PER_ORG: '6',
      };
    };
    conductors = await Promise.all(['a', 'b'].map((name) => startSvcProcess(['--role=conductor'], env(name))));
  });
  afterAll(async () => {
    await Promise.all(conductors.map((c) => c.stop('SIGKILL')));
    await db?.drop().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('refuses a key past 4 requests and the organisation past 6, with Retry-After, whichever replica and route', async () => {
    const [a, b] = conductors;
    const call = async (c: SvcProcess, key: string, path: string, init: RequestInit = {}) => {
      const res = await fetch(c.url + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });
      const body = await res.json();
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
    };
    // key A: creates key B (an extension route), then three more requests over both replicas and both surfaces
    const created = await call(a, OWNER, '/api/keys', { method: 'POST', body: JSON.stringify({ name: 'second' }) });
    expect(created.status).toBe(201);
    const second = created.body.secret as string;
    expect(second).toMatch(/^ao_/);
    expect((await call(b, OWNER, '/v1/agents')).status).toBe(200);
    expect((await call(a, OWNER, '/api/whoami')).status).toBe(200);
    expect((await call(b, OWNER, '/api/models')).status).toBe(200);

    // key A's fifth request: over its own limit (4), on either surface
    const keyRefused = await call(a, OWNER, '/v1/agents');
    expect(keyRefused.status).toBe(429);
    expect(Number(keyRefused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(keyRefused.body.error.code).toBe('rate_limit_exceeded');

    // key B has used nothing; its first request is the organisation's sixth
    expect((await call(b, second, '/api/whoami')).status).toBe(200);
    // its second is the organisation's seventh: refused by the organisation's limit (6), on both replicas and surfaces
    for (const [replica, path] of [[b, '/v1/agents'], [a, '/api/usage']] as const) {
      const orgRefused = await call(replica, second, path);
      expect(orgRefused.status).toBe(429);
      const wait = Number(orgRefused.retryAfter);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      const message = `Rate limit reached. Retry after ${wait} seconds.`;
      // /v1 answers the OpenAI error object, /api its `{error}` string
      expect(path.startsWith('/v1') ? orgRefused.body.error.message : orgRefused.body.error).toBe(message);
    }
  });
});
