import { Hono } from 'hono';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Database } from '../../../db/index.ts';
import { useJsonErrors } from '../../../shared/http.ts';
import { server } from '../../../../test/support/backends.ts';
import { createLimiter, type Limiter } from './index.ts';

/**
 * The shared limiter on PostgreSQL: a window admits exactly `limit` requests however many connections (replicas)
 * race for it, refuses the rest with 429 and Retry-After in the surface's error shape, opens anew once it has passed,
 * and expired windows are purged.
 */
describe('the shared rate limiter', () => {
  let a: Database;
  let b: Database;
  let cleanup: () => Promise<void>;
  let limiter: Limiter;
  let unique = 0;
  const key = () => `k${++unique}`;

  beforeAll(async () => {
    const db = await server.setup();
    cleanup = db.cleanup;
    a = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    b = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await migrate(a);
    limiter = createLimiter({ db: a.db });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cleanup?.();
  });

  it('admits `limit` requests in a window, then refuses with the seconds until it resets', async () => {
    const k = key();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.check('unit', k, 3, 60_000));
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]]);
    expect(results[3].retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect(results[3].retryAfterSeconds).toBeLessThanOrEqual(60);
    expect((await limiter.check('other-scope', k, 3, 60_000)).allowed).toBe(true); // scopes count apart
  });

  it('admits exactly the limit when two replicas race for one key', async () => {
    const k = key();
    const other = createLimiter({ db: b.db });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? limiter : other).check('race', k, 10, 60_000)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
  });

  it('opens a new window once the old one has passed', async () => {
    const k = key();
    expect((await limiter.check('reset', k, 1, 60_000)).allowed).toBe(true);
    expect((await limiter.check('reset', k, 1, 60_000)).allowed).toBe(false);
    await sql`update rate_limits set resets_at = now() - interval '1 second' where scope = 'reset' and key = ${k}`.execute(a.db); // a minute later
    expect(await limiter.check('reset', k, 1, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('answers 429 with Retry-After in the surface\'s error shape, naming the longest wait of the rules it broke', async () => {
    const k = key();
    const app = new Hono();
    useJsonErrors(app);
    app.use(
      '*',
      limiter.middleware([
        { scope: 'mw-short', limit: 2, periodMs: 10_000, key: (c) => c.req.header('x-key') },
        { scope: 'mw-long', limit: 2, periodMs: 120_000, key: (c) => c.req.header('x-key') },
        { scope: 'mw-skipped', limit: 0, periodMs: 60_000, key: () => undefined },
      ]),
    );
    app.get('/thing', (c) => c.json({ ok: true }));
    const get = () => app.request('/thing', { headers: { 'x-key': k } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    const refused = await get();
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(100);
    expect(await refused.json()).toEqual({ error: `Rate limit reached. Retry after ${wait} seconds.` });
    expect((await app.request('/thing')).status).toBe(200); // no key: no rule applies
  });

  it('purges windows that have passed and keeps live ones', async () => {
    const live = key();
    const gone = key();
    await limiter.check('purge', live, 5, 60_000);
    await limiter.check('purge', gone, 5, 60_000);
    await sql`update rate_limits set resets_at = now() - interval '1 second' where scope = 'purge' and key = ${gone}`.execute(a.db);
    expect(await limiter.purge()).toBeGreaterThanOrEqual(1);
    const left = await sql<{ key: string }>`select key from rate_limits where scope = 'purge'`.execute(a.db);
    expect(left.rows.map((r) => r.key)).toEqual([live]);
  });
});
