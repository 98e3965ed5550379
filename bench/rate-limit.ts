/**
 * Cost of one shared rate-limit check (one upsert on PostgreSQL, src/modules/conductor/limits/), against a bare
 * `select 1` round trip on the same pool: sequential latency and throughput under concurrency, for one hot key (every
 * request on one row: the worst case for row locks) and for many keys, with one rule and with /v1's two (org + key).
 * Usage: npm run bench:rate-limit [-- --seconds 3 --concurrency 16]
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { fmt, load } from './lib.ts';
import { migrate, openDatabase } from '../src/db/index.ts';
import { createLimiter } from '../src/modules/conductor/index.ts';
import { takeHits } from '../src/modules/conductor/limits/limits.repo.ts';
import { adminUrl, answers, createTestDatabase } from '../test/support/pg.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '16' } } });
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

async function bench(label: string, url: string) {
  const database = await openDatabase({ url, dataDir: '/nonexistent' });
  try {
    await migrate(database);
    const limiter = createLimiter({ db: database.db });
    let n = 0;
    const cases: Array<[string, () => Promise<void>]> = [
      ['select 1 (baseline)', async () => void (await sql`select 1`.execute(database.db))],
      ['check, one hot key', async () => void (await limiter.check('bench', 'hot', 1e9, 60_000))],
      ['check, 10k keys', async () => void (await limiter.check('bench', `k${n++ % 10_000}`, 1e9, 60_000))],
      ['/v1 rules (org + key)', async () => {
        // what the /v1 middleware sends: both counters in one statement
        const i = n++ % 10_000;
        await takeHits(database.db, [{ scope: 'bench-org', key: `o${i % 100}`, limit: 1e9, periodMs: 60_000 }, { scope: 'bench-key', key: `k${i}`, limit: 1e9, periodMs: 60_000 }]);
      }],
    ];
    console.log(`\n${label}`);
    for (const [name, once] of cases) {
      for (let i = 0; i < 300; i++) await once(); // warm-up
      const seq = await load(once, { concurrency: 1, seconds });
      const par = await load(once, { concurrency, seconds });
      console.log(
        `  ${name.padEnd(24)} sequential p50 ${fmt(seq.p50, 3)} ms p99 ${fmt(seq.p99, 3)} ms (${fmt(seq.rps, 0)}/s)   ` +
          `${concurrency} concurrent: ${fmt(par.rps, 0)}/s p50 ${fmt(par.p50, 2)} ms p99 ${fmt(par.p99, 2)} ms${par.errors ? ` (${par.errors} errors)` : ''}`,
      );
    }
  } finally {
    await database.close();
  }
}

console.log(`shared rate limiter: ${seconds} s per measurement`);
if (await answers(adminUrl())) {
  const db = await createTestDatabase();
  try {
    await bench('PostgreSQL server (127.0.0.1, TCP)', db.url);
  } finally {
    await db.drop();
  }
} else console.log('PostgreSQL server: not reachable, skipped');
await bench('embedded PostgreSQL (unix socket)', 'memory');
