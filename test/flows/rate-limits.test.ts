import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/pg.ts';
import { startSvcProcess, type SvcProcess } from '../support/process.ts';

/**
 * The /v1 limits hold across conductor replicas: two `svc serve --role=conductor` processes on one PostgreSQL
 * database admit 10 requests of one key in total (SVC_RATE_LIMIT_PER_KEY=10 a minute), not 10 each; then every
 * replica answers 429 with Retry-After in the OpenAI error shape.
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
